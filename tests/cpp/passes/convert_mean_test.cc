// ConvertToCortexM on mean.dim: cortex_m.quantized_mean (TFLite Micro's MEAN) over any block of
// dims in memory order, any keepdim and qparams, equal ones too (no global pool). Against the
// folded graph's float mean: TFLM's fold takes k = floor(log2 count), so the shift left after it
// can be -1: the doubling multiply then rounds at half an output LSB before the final rounding and
// values a quarter to a half above an integer round up: about a quarter of the outputs one off
// (0.27 at count 7, equal scales; kTflmOff), none beyond 3/4 LSB of the real mean. Bit-exactness
// with TFLM is tested in tests/py/test_quantized_mean_tflm.py.
#include "convert_test_util.h"

namespace cortexm {
namespace {

using namespace testing;

constexpr const char* kMean = "aten.mean.dim";
constexpr const char* kQMean = "cortex_m.quantized_mean.default";
constexpr double kTflmOff = 0.3;

Graph mean_graph(std::vector<int64_t> shape, std::vector<int64_t> dims, bool keepdim,
                 QuantParams qi, QuantParams qo, std::vector<int64_t> dim_order = {}) {
  Graph g;
  TensorInfo info = int8_info(std::move(shape), std::move(qi));
  info.dim_order = std::move(dim_order);
  const ValueId x = g.add_input("x", info);
  g.set_outputs({quantized(
      g, g.call(kMean, {x}, {{"dim", std::move(dims)}, {"keepdim", keepdim}})[0], std::move(qo))});
  return g;
}

TEST(ConvertMean, SileroTimeMeanRank2) {
  Graph g = mean_graph({40, 17}, {1}, false, qp(0.02, -5), qp(0.02, -5));
  run_and_compare_lsb(g, convert_to_cortex_m, kTflmOff);
  EXPECT_EQ(count(g, kQMean), 1);
}

TEST(ConvertMean, SpatialWithOtherOutputQparams) {
  for (bool keepdim : {false, true}) {
    Graph g = mean_graph({4, 16, 5, 7}, {2, 3}, keepdim, qp(0.05, 4), qp(0.02, -3));
    run_and_compare_lsb(g, convert_to_cortex_m, kTflmOff);
    EXPECT_EQ(count(g, kQMean), 1);
  }
}

TEST(ConvertMean, ChannelsLastSpatial) {
  Graph g = mean_graph({4, 16, 5, 7}, {-1, -2}, true, qp(0.05, 4), qp(0.03, 1), {0, 2, 3, 1});
  run_and_compare_lsb(g, convert_to_cortex_m, kTflmOff);
  EXPECT_EQ(count(g, kQMean), 1);
}

TEST(ConvertMean, ChannelDim) {
  Graph g = mean_graph({4, 16, 5, 7}, {1}, false, qp(0.05, 4), qp(0.05, 4));
  run_and_compare_lsb(g, convert_to_cortex_m, kTflmOff);
  EXPECT_EQ(count(g, kQMean), 1);
}

// The multiplier is TFLM's: QuantizeMultiplier(s_in / s_out) = (2^30, 1) for equal scales, then
// k = floor(log2 16) = 4: (2^34 / 16, 1 - 4).
TEST(ConvertMean, EqualQparamsAreTflmMeanNotAPool) {
  Graph g = mean_graph({1, 8, 4, 4}, {2, 3}, true, qp(0.05, 4), qp(0.05, 4));
  run_and_compare_lsb(g, convert_to_cortex_m, kTflmOff);
  EXPECT_EQ(count(g, "cortex_m.quantized_avg_pool2d.default"), 0);
  const Node& m = only(g, kQMean);
  EXPECT_EQ(attr_i(m, "output_multiplier"), int64_t{1} << 30);
  EXPECT_EQ(attr_i(m, "output_shift"), -3);
  EXPECT_EQ(attr_i(m, "input_offset"), -4);
  EXPECT_EQ(attr_i(m, "output_offset"), 4);
}

// 49 = 7 * 7: k = 5, (2^30 * 2^5) / 49 truncated.
TEST(ConvertMean, FoldsTheCountWithIntegerArithmetic) {
  Graph g = mean_graph({1, 3, 7, 7}, {2, 3}, false, qp(0.05, 4), qp(0.05, 4));
  run_and_compare_lsb(g, convert_to_cortex_m, kTflmOff);
  const Node& m = only(g, kQMean);
  EXPECT_EQ(attr_i(m, "output_multiplier"), 701219150);
  EXPECT_EQ(attr_i(m, "output_shift"), -4);
}

TEST(ConvertMean, DimsApartInMemoryStayFloat) {
  Graph g = mean_graph({4, 16, 5, 7}, {1, 3}, false, qp(0.05, 4), qp(0.05, 4));
  EXPECT_FALSE(run_and_compare(g, convert_to_cortex_m));
  EXPECT_NE(only(g, kMean).meta.at("lowering").find("one block"), std::string::npos)
      << only(g, kMean).meta.at("lowering");
}

}  // namespace
}  // namespace cortexm
