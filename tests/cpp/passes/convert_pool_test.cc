// ConvertToCortexM on pools: max pool is exact (ceil_mode through bottom / right padding); avg
// pool within 1 LSB when it averages valid taps; the rest stays float with a reason.
#include "convert_test_util.h"

namespace cortexm {
namespace {

using namespace testing;

constexpr const char* kMaxPool = "aten.max_pool2d.default";
constexpr const char* kAvgPool = "aten.avg_pool2d.default";
constexpr const char* kQMaxPool = "cortex_m.quantized_max_pool2d.default";
constexpr const char* kQAvgPool = "cortex_m.quantized_avg_pool2d.default";

Graph pool(const char* op, std::vector<int64_t> shape, Attrs attrs,
           QuantParams q_out = qp(0.05, -3)) {
  Graph g;
  const ValueId x = q_input(g, "x", std::move(shape), 0.05, -3);
  g.set_outputs({quantized(g, g.call(op, {x}, std::move(attrs))[0], std::move(q_out))});
  return g;
}

Attrs geometry(std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> p) {
  return {{"kernel_size", std::move(k)}, {"stride", std::move(s)}, {"padding", std::move(p)}};
}

void expect_float(Graph& g, const char* op, const std::string& reason_part) {
  EXPECT_FALSE(run_and_compare(g, convert_to_cortex_m));
  const std::string& lowering = only(g, op).meta.at("lowering");
  EXPECT_EQ(lowering.rfind("float: ", 0), 0u);
  EXPECT_NE(lowering.find(reason_part), std::string::npos) << lowering;
}

TEST(ConvertPool, MaxPoolIsExact) {
  Graph g = pool(kMaxPool, {2, 3, 9, 8}, geometry({3, 3}, {2, 2}, {1, 1}));
  EXPECT_TRUE(run_and_compare(g, convert_to_cortex_m));
  EXPECT_EQ(count(g, kClone), 2);
  const Node& p = only(g, kQMaxPool);
  EXPECT_EQ(attr_ints(p, "padding"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(attr_ints(p, "stride"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(g.node(g.producer(p.inputs[0])).op, kClone);
}

TEST(ConvertPool, MaxPoolCeilModeUsesBottomRightPadding) {
  Attrs a = geometry({3, 2}, {2, 2}, {0, 0});
  a.emplace_back("ceil_mode", true);
  Graph g = pool(kMaxPool, {1, 4, 8, 7}, a);
  EXPECT_EQ(g.value(g.outputs()[0]).info.shape, (std::vector<int64_t>{1, 4, 4, 4}));
  EXPECT_TRUE(run_and_compare(g, convert_to_cortex_m));
  EXPECT_EQ(attr_ints(only(g, kQMaxPool), "padding"), (std::vector<int64_t>{0, 0, 1, 1}));
}

TEST(ConvertPool, MaxPoolDefaultStrideIsKernel) {
  Graph g = pool(kMaxPool, {1, 2, 6, 6}, {{"kernel_size", std::vector<int64_t>{2}}});
  EXPECT_TRUE(run_and_compare(g, convert_to_cortex_m));
  EXPECT_EQ(attr_ints(only(g, kQMaxPool), "stride"), (std::vector<int64_t>{2, 2}));
}

TEST(ConvertPool, MaxPoolWithDilationStaysFloat) {
  Attrs a = geometry({2, 2}, {1, 1}, {0, 0});
  a.emplace_back("dilation", std::vector<int64_t>{2, 2});
  Graph g = pool(kMaxPool, {1, 2, 6, 6}, a);
  expect_float(g, kMaxPool, "dilation");
}

TEST(ConvertPool, RescalingPoolStaysFloat) {
  Graph g = pool(kMaxPool, {1, 2, 6, 6}, geometry({2, 2}, {2, 2}, {0, 0}), qp(0.1, 0));
  expect_float(g, kMaxPool, "qparams differ");
}

TEST(ConvertPool, AvgPoolWithinOneLsb) {
  Graph g = pool(kAvgPool, {2, 5, 8, 8}, geometry({2, 2}, {2, 2}, {0, 0}));
  run_and_compare_lsb(g, convert_to_cortex_m, 0.2);
  EXPECT_EQ(count(g, kQAvgPool), 1);
  EXPECT_EQ(count(g, kClone), 2);
}

TEST(ConvertPool, AvgPoolCeilModeWithoutPadding) {
  Attrs a = geometry({3, 3}, {2, 2}, {0, 0});
  a.emplace_back("ceil_mode", true);
  Graph g = pool(kAvgPool, {1, 3, 8, 8}, a);
  run_and_compare_lsb(g, convert_to_cortex_m, 0.2);
  EXPECT_EQ(attr_ints(only(g, kQAvgPool), "padding"), (std::vector<int64_t>{0, 0, 1, 1}));
}

TEST(ConvertPool, AvgPoolPaddedExcludingPadIsLowered) {
  Attrs a = geometry({3, 3}, {1, 1}, {1, 1});
  a.emplace_back("count_include_pad", false);
  Graph g = pool(kAvgPool, {1, 3, 6, 6}, a);
  run_and_compare_lsb(g, convert_to_cortex_m, 0.2);
  EXPECT_EQ(count(g, kQAvgPool), 1);
}

TEST(ConvertPool, AvgPoolCountingPaddingStaysFloat) {
  Graph g = pool(kAvgPool, {1, 3, 6, 6}, geometry({3, 3}, {1, 1}, {1, 1}));
  expect_float(g, kAvgPool, "count_include_pad");
}

TEST(ConvertPool, AvgPoolDivisorOverrideStaysFloat) {
  Attrs a = geometry({2, 2}, {2, 2}, {0, 0});
  a.emplace_back("divisor_override", int64_t{3});
  Graph g = pool(kAvgPool, {1, 3, 6, 6}, a);
  expect_float(g, kAvgPool, "divisor_override");
}

TEST(ConvertPool, ThreeDimensionalInputStaysFloat) {
  Graph g = pool(kMaxPool, {3, 6, 6}, geometry({2, 2}, {2, 2}, {0, 0}));
  expect_float(g, kMaxPool, "rank");
}

Graph mean(std::vector<int64_t> dims, bool keepdim) {
  Graph g;
  const ValueId x = q_input(g, "x", {2, 6, 5, 7}, 0.05, -3);
  const ValueId m =
      g.call("aten.mean.dim", {x}, {{"dim", std::move(dims)}, {"keepdim", keepdim}})[0];
  g.set_outputs({quantized(g, m, qp(0.05, -3))});
  return g;
}

// TFLite Micro's MEAN rounds otherwise than AVERAGE_POOL_2D: a mean is never a pool, equal
// qparams and NCHW H, W included (convert_mean_test.cc).
TEST(ConvertPool, GlobalMeanIsNotAnAvgPool) {
  for (bool keepdim : {true, false}) {
    Graph g = mean({2, 3}, keepdim);
    run_and_compare_lsb(g, convert_to_cortex_m, 0.3);
    EXPECT_EQ(count(g, kQAvgPool), 0);
    EXPECT_EQ(count(g, "cortex_m.quantized_mean.default"), 1);
  }
}

TEST(ConvertPool, MeanOverChannelsIsNotAPool) {
  Graph g = mean({1}, true);
  run_and_compare_lsb(g, convert_to_cortex_m, 0.3);  // TFLM's rounding: see convert_mean_test.cc
  EXPECT_EQ(count(g, "cortex_m.quantized_avg_pool2d.default"), 0);
  EXPECT_EQ(count(g, "cortex_m.quantized_mean.default"), 1);
}

}  // namespace
}  // namespace cortexm
