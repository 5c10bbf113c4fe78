// ConvertToCortexM on softmax / log_softmax: ahead-of-time scaling, the dim moved innermost when it
// is not, within 1 LSB of the folded (float) graph.
#include "convert_test_util.h"
#include "cortexm/kernels/quantized_log_softmax.h"

namespace cortexm {
namespace {

using namespace testing;

constexpr const char* kSoftmax = "aten._softmax.default";
constexpr const char* kLogSoftmax = "aten._log_softmax.default";
constexpr const char* kQSoftmax = "cortex_m.quantized_softmax.default";
constexpr const char* kQLogSoftmax = "cortex_m.quantized_log_softmax.default";

Graph softmax_graph(const char* op, TensorInfo in, int64_t dim, QuantParams out) {
  Graph g;
  const ValueId x = g.add_input("x", std::move(in));
  g.set_outputs({quantized(g, g.call(op, {x}, {{"dim", dim}})[0], std::move(out))});
  return g;
}

TEST(ConvertSoftmax, LastDimUsesArmSoftmaxScaling) {
  Graph g = softmax_graph(kSoftmax, int8_info({3, 10}, qp(0.0713, 5)), -1, qp(1.0 / 256, -128));
  run_and_compare_lsb(g, convert_to_cortex_m, 0.05);
  EXPECT_EQ(g.num_nodes(), 1u);
  const Node& s = only(g, kQSoftmax);
  SoftmaxScaling want;
  ASSERT_TRUE(softmax_scaling(0.0713, &want).ok());
  EXPECT_EQ(attr_i(s, "dim"), 1);
  EXPECT_EQ(attr_i(s, "input_multiplier"), want.input_multiplier);
  EXPECT_EQ(attr_i(s, "input_shift"), want.input_left_shift);
  EXPECT_EQ(attr_i(s, "diff_min"), want.diff_min);
  EXPECT_EQ(s.meta.at("lowering"), "cortex_m");
}

TEST(ConvertSoftmax, ChannelDimOfContiguousInputMovesInnermost) {
  Graph g = softmax_graph(kSoftmax, int8_info({2, 6, 3, 4}, qp(0.05, -3)), 1, qp(1.0 / 256, -128));
  run_and_compare_lsb(g, convert_to_cortex_m, 0.05);
  EXPECT_EQ(count(g, kQSoftmax), 1);
  EXPECT_EQ(count(g, kClone), 2);
  const Node& s = only(g, kQSoftmax);
  EXPECT_EQ(g.value(s.inputs[0]).info.effective_dim_order(), (std::vector<int64_t>{0, 2, 3, 1}));
  EXPECT_TRUE(g.value(g.outputs()[0]).info.contiguous());
}

TEST(ConvertSoftmax, ChannelDimOfChannelsLastInputNeedsNoCopy) {
  TensorInfo in = int8_info({2, 6, 3, 4}, qp(0.05, -3));
  in.dim_order = {0, 2, 3, 1};
  Graph g = softmax_graph(kSoftmax, in, 1, qp(1.0 / 256, -128));
  g.mutable_value(g.outputs()[0]).info.dim_order = {0, 2, 3, 1};
  g.reinfer(g.producer(g.outputs()[0]));
  run_and_compare_lsb(g, convert_to_cortex_m, 0.05);
  EXPECT_EQ(count(g, kQSoftmax), 1);
  EXPECT_EQ(count(g, kClone), 0);
}

TEST(ConvertSoftmax, OtherOutputQParamsStayFloat) {
  Graph g = softmax_graph(kSoftmax, int8_info({3, 10}, qp(0.07, 5)), -1, qp(1.0 / 255, -128));
  EXPECT_FALSE(run_and_compare(g, convert_to_cortex_m));
  EXPECT_NE(only(g, kSoftmax).meta.at("lowering").find("1/256, -128"), std::string::npos);
}

TEST(ConvertSoftmax, TinyInputScaleStaysFloat) {
  Graph g = softmax_graph(kSoftmax, int8_info({3, 10}, qp(1e-9, 0)), -1, qp(1.0 / 256, -128));
  EXPECT_FALSE(run_and_compare(g, convert_to_cortex_m));
  EXPECT_NE(only(g, kSoftmax).meta.at("lowering").find("input_scale"), std::string::npos);
}

TEST(ConvertSoftmax, LogSoftmaxOverClasses) {
  Graph g = softmax_graph(kLogSoftmax, int8_info({2, 40, 3}, qp(0.09, 11)), 1, qp(16.0 / 256, 127));
  run_and_compare_lsb(g, convert_to_cortex_m, 0.05);
  EXPECT_EQ(count(g, kQLogSoftmax), 1);
  EXPECT_EQ(count(g, kClone), 2);
  const Node& s = only(g, kQLogSoftmax);
  LogSoftmaxScaling want;
  ASSERT_TRUE(log_softmax_scaling(0.09, &want).ok());
  EXPECT_EQ(attr_i(s, "input_multiplier"), want.input_multiplier);
  EXPECT_EQ(attr_i(s, "input_shift"), want.input_left_shift);
  EXPECT_EQ(attr_i(s, "diff_min"), want.diff_min);
  EXPECT_EQ(attr_i(s, "reverse_scaling_divisor"), want.reverse_scaling_divisor);
  EXPECT_EQ(attr_i(s, "reverse_scaling_right_shift"), want.reverse_scaling_right_shift);
}

TEST(ConvertSoftmax, LogSoftmaxNeedsTfliteOutputQParams) {
  Graph g = softmax_graph(kLogSoftmax, int8_info({2, 8}, qp(0.09, 11)), 1, qp(0.05, 127));
  EXPECT_FALSE(run_and_compare(g, convert_to_cortex_m));
  EXPECT_NE(only(g, kLogSoftmax).meta.at("lowering").find("16/256, 127"), std::string::npos);
}

}  // namespace
}  // namespace cortexm
