// ConvertToCortexM on mean.dim: the global pool when the qparams agree on NCHW H and W; else
// cortex_m.quantized_mean over any block of dims in memory order, any keepdim and qparams. The
// kernel's multiply rounds at 2^shift before the final rounding, so up to a tenth of the outputs
// may be one off the folded graph's float mean (ties within 1/8 LSB of a half).
#include "convert_test_util.h"

namespace cortexm {
namespace {

using namespace testing;

constexpr const char* kMean = "aten.mean.dim";
constexpr const char* kQMean = "cortex_m.quantized_mean.default";

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
  run_and_compare_lsb(g, convert_to_cortex_m, 0.1);
  EXPECT_EQ(count(g, kQMean), 1);
}

TEST(ConvertMean, SpatialWithOtherOutputQparams) {
  for (bool keepdim : {false, true}) {
    Graph g = mean_graph({4, 16, 5, 7}, {2, 3}, keepdim, qp(0.05, 4), qp(0.02, -3));
    run_and_compare_lsb(g, convert_to_cortex_m, 0.1);
    EXPECT_EQ(count(g, kQMean), 1);
  }
}

TEST(ConvertMean, ChannelsLastSpatial) {
  Graph g = mean_graph({4, 16, 5, 7}, {-1, -2}, true, qp(0.05, 4), qp(0.03, 1), {0, 2, 3, 1});
  run_and_compare_lsb(g, convert_to_cortex_m, 0.1);
  EXPECT_EQ(count(g, kQMean), 1);
}

TEST(ConvertMean, ChannelDim) {
  Graph g = mean_graph({4, 16, 5, 7}, {1}, false, qp(0.05, 4), qp(0.05, 4));
  run_and_compare_lsb(g, convert_to_cortex_m, 0.1);
  EXPECT_EQ(count(g, kQMean), 1);
}

TEST(ConvertMean, EqualQparamsStillAGlobalPool) {
  Graph g = mean_graph({1, 8, 4, 4}, {2, 3}, true, qp(0.05, 4), qp(0.05, 4));
  run_and_compare_lsb(g, convert_to_cortex_m);
  EXPECT_EQ(count(g, "cortex_m.quantized_avg_pool2d.default"), 1);
  EXPECT_EQ(count(g, kQMean), 0);
}

TEST(ConvertMean, DimsApartInMemoryStayFloat) {
  Graph g = mean_graph({4, 16, 5, 7}, {1, 3}, false, qp(0.05, 4), qp(0.05, 4));
  EXPECT_FALSE(run_and_compare(g, convert_to_cortex_m));
  EXPECT_NE(only(g, kMean).meta.at("lowering").find("one block"), std::string::npos)
      << only(g, kMean).meta.at("lowering");
}

}  // namespace
}  // namespace cortexm
