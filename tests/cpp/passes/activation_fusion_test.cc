// ActivationFusion: exact (run_and_compare) on graphs ConvertToCortexM lowered first.
#include "convert_test_util.h"
#include "int16_test_util.h"

namespace cortexm {
namespace {

using namespace testing;

constexpr const char* kRelu = "aten.relu.default";
constexpr const char* kHardtanh = "aten.hardtanh.default";
constexpr const char* kClamp = "aten.clamp.default";

const QuantParams kOut = qp(0.0731, -9);

// A folded conv (1-D for rank-3 input) with per-channel weights and an int32 bias.
ValueId folded_conv(Graph& g, ValueId x, int64_t c_out, int64_t kernel, const QuantParams& q_out,
                    uint32_t seed = 1, int64_t groups = 1) {
  const TensorInfo in = g.value(x).info;
  const bool one_d = in.rank() == 3;
  std::vector<double> s_w, s_b;
  for (int64_t o = 0; o < c_out; ++o) {
    s_w.push_back(0.005 + 0.001 * o);
    s_b.push_back(in.qparams->scales[0] * s_w.back());
  }
  std::vector<int64_t> w_shape = {c_out, in.shape[1] / groups, kernel};
  if (!one_d) w_shape.push_back(kernel);
  const ValueId w = int8_const(g, "w", w_shape, qp_channels(s_w, 0), seed);
  const ValueId b =
      int32_const(g, "b", random_int32s(c_out, -5000, 5000, seed), qp_channels(s_b, 0));
  const std::vector<int64_t> one = one_d ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 1};
  const std::vector<int64_t> pad = one_d ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 1};
  const ValueId y =
      g.call(kConv, {x, w, b},
             {{"stride", one}, {"padding", pad}, {"dilation", one}, {"groups", groups}})[0];
  return quantized(g, y, q_out);
}

// A folded unary activation keeping its input's qparams.
ValueId folded(Graph& g, const char* op, ValueId x, Attrs attrs = {}) {
  return quantized(g, g.call(op, {x}, std::move(attrs))[0], *g.value(x).info.qparams);
}

int32_t q(float v) { return static_cast<int32_t>(std::lrint(v / 0.0731f)) - 9; }

// Lowers, fuses (exactly), and returns the lowered op that took the activation.
const Node& lower_and_fuse(Graph& g, const char* lowered_op) {
  convert_to_cortex_m(g, TargetConfig{});
  EXPECT_TRUE(run_and_compare(g, activation_fusion));
  const Node& n = only(g, lowered_op);
  EXPECT_EQ(count(g, kRelu) + count(g, kHardtanh) + count(g, kClamp), 0);
  return n;
}

TEST(ActivationFusion, Conv2dRelu) {
  Graph g;
  const ValueId x = q_input(g, "x", {1, 3, 8, 8}, 0.05, 4);
  g.set_outputs({folded(g, kRelu, folded_conv(g, x, 5, 3, kOut))});
  const Node& conv = lower_and_fuse(g, kQConv);
  EXPECT_EQ(attr_i(conv, "activation_min"), -9);
  EXPECT_EQ(attr_i(conv, "activation_max"), 127);
  EXPECT_EQ(conv.meta.at("fused_activation"), kRelu);
}

// Conv1d + ReLU: the relu sits after the conv's clone back and view_copy.
TEST(ActivationFusion, Conv1dReluThroughCloneAndView) {
  Graph g;
  const ValueId x = q_input(g, "x", {2, 4, 30}, 0.05, -2);
  g.set_outputs({folded(g, kRelu, folded_conv(g, x, 6, 5, kOut))});
  const Node& conv = lower_and_fuse(g, kQConv);
  EXPECT_EQ(attr_i(conv, "activation_min"), -9);
  EXPECT_EQ(output_producer(g).op, kView);
}

// Silero's decoder shape: the relu reads an unsqueeze (and a squeeze) of the conv1d's output.
TEST(ActivationFusion, Conv1dReluThroughSqueezeAndUnsqueeze) {
  Graph g;
  const ValueId x = q_input(g, "x", {1, 4, 30}, 0.05, -2);
  const ValueId c = folded_conv(g, x, 6, 5, kOut);
  const ValueId u = g.call("aten.unsqueeze_copy.default", {c}, {{"dim", int64_t{3}}})[0];
  const ValueId sq = g.call("aten.squeeze_copy.dims", {u}, {{"dim", std::vector<int64_t>{0}}})[0];
  g.set_outputs({folded(g, kRelu, sq)});
  const Node& conv = lower_and_fuse(g, kQConv);
  EXPECT_EQ(attr_i(conv, "activation_min"), -9);
  EXPECT_EQ(conv.meta.at("fused_activation"), kRelu);
}

TEST(ActivationFusion, Relu6AsHardtanh) {
  Graph g;
  const ValueId x = q_input(g, "x", {1, 2, 6, 6}, 0.05, 0);
  g.set_outputs({folded(g, kHardtanh, folded_conv(g, x, 8, 3, kOut),
                        {{"min_val", 0.0}, {"max_val", 6.0}})});
  const Node& conv = lower_and_fuse(g, kQConv);
  EXPECT_EQ(attr_i(conv, "activation_min"), -9);
  EXPECT_EQ(attr_i(conv, "activation_max"), q(6.0f));
}

TEST(ActivationFusion, DepthwiseHardtanhAndChainedClamp) {
  Graph g;
  const ValueId x = q_input(g, "x", {1, 4, 9, 9}, 0.05, 0);
  const ValueId h = folded(g, kHardtanh, folded_conv(g, x, 4, 3, kOut, 1, /*groups=*/4),
                           {{"min_val", -0.5}, {"max_val", 2.0}});
  g.set_outputs({folded(g, kClamp, h, {{"min", -1.0}, {"max", 1.0}})});
  const Node& dw = lower_and_fuse(g, kQDepthwise);
  EXPECT_EQ(attr_i(dw, "activation_min"), q(-0.5f));
  EXPECT_EQ(attr_i(dw, "activation_max"), q(1.0f));
}

TEST(ActivationFusion, LinearClampWithOnlyAMax) {
  Graph g;
  const ValueId x = q_input(g, "x", {16, 20}, 0.05, 1);
  const ValueId w = int8_const(g, "w", {7, 20}, qp_channels(std::vector<double>(7, 0.004), 0), 3);
  const ValueId y = quantized(g, g.call("aten.linear.default", {x, w}, {})[0], kOut);
  g.set_outputs({folded(g, kClamp, y, {{"max", 0.3}})});
  const Node& lin = lower_and_fuse(g, "cortex_m.quantized_linear.default");
  EXPECT_EQ(attr_i(lin, "activation_min"), -128);
  EXPECT_EQ(attr_i(lin, "activation_max"), q(0.3f));
}

TEST(ActivationFusion, AddAndMaxPoolRelu) {
  Graph g;
  const ValueId a = q_input(g, "a", {1, 4, 8, 8}, 0.05, 3);
  const ValueId b = q_input(g, "b", {1, 4, 8, 8}, 0.04, -3);
  const ValueId sum = quantized(g, g.call("aten.add.Tensor", {a, b}, {})[0], kOut);
  const ValueId r = folded(g, kRelu, sum);
  const ValueId pooled = quantized(g, g.call("aten.max_pool2d.default", {r},
                                             {{"kernel_size", std::vector<int64_t>{2, 2}}})[0],
                                   kOut);
  g.set_outputs({folded(g, kHardtanh, pooled, {{"min_val", -0.2}, {"max_val", 0.25}})});
  convert_to_cortex_m(g, TargetConfig{});
  EXPECT_TRUE(run_and_compare(g, activation_fusion));
  EXPECT_EQ(count(g, kRelu) + count(g, kHardtanh), 0);
  EXPECT_EQ(attr_i(only(g, "cortex_m.quantized_add.default"), "activation_min"), -9);
  const Node& pool = only(g, "cortex_m.quantized_max_pool2d.default");
  EXPECT_EQ(attr_i(pool, "activation_min"), q(-0.2f));
  EXPECT_EQ(attr_i(pool, "activation_max"), q(0.25f));
}

TEST(ActivationFusion, Int16AddReluAndMulClamp) {
  Graph g;
  const ValueId a = g.add_input("a", int16_info({2, 3, 7}, qp16(3e-4)));
  const ValueId b = g.add_input("b", int16_info({7}, qp16(5e-4)));
  const QuantParams q_sum = qp16(6e-4);
  const ValueId sum = quantized_as(g, g.call("aten.add.Tensor", {a, b}, {})[0], DType::kInt16, q_sum);
  const ValueId r = quantized_as(g, g.call(kRelu, {sum}, {})[0], DType::kInt16, q_sum);
  const QuantParams q_prod = qp16(4e-4);
  const ValueId prod = quantized_as(g, g.call("aten.mul.Tensor", {r, a}, {})[0], DType::kInt16, q_prod);
  g.set_outputs({quantized_as(g, g.call(kClamp, {prod}, {{"min", -1.5}, {"max", 2.0}})[0],
                              DType::kInt16, q_prod)});
  convert_to_cortex_m(g, TargetConfig{});
  EXPECT_TRUE(run_and_compare(g, activation_fusion));
  EXPECT_EQ(count(g, kRelu) + count(g, kClamp), 0);
  const Node& add = only(g, "cortex_m.quantized_add_s16.default");
  EXPECT_EQ(attr_i(add, "activation_min"), 0);
  EXPECT_EQ(attr_i(add, "activation_max"), 32767);
  const Node& mul = only(g, "cortex_m.quantized_mul_s16.default");
  EXPECT_EQ(attr_i(mul, "activation_min"), std::lrint(-1.5f / 4e-4f));
  EXPECT_EQ(attr_i(mul, "activation_max"), std::lrint(2.0f / 4e-4f));
  EXPECT_EQ(mul.meta.at("fused_activation"), kClamp);
}

// An int8 relu does not fold into an int16 producer: the dtypes must match.
TEST(ActivationFusion, RequantizingInt16ReluStays) {
  Graph g;
  const ValueId a = g.add_input("a", int16_info({2, 7}, qp16(3e-4)));
  const ValueId sum = quantized_as(g, g.call("aten.add.Tensor", {a, a}, {})[0], DType::kInt16, qp16(6e-4));
  g.set_outputs({quantized_as(g, g.call(kRelu, {sum}, {})[0], DType::kInt8, qp(0.05, -128))});
  convert_to_cortex_m(g, TargetConfig{});
  EXPECT_FALSE(run_and_compare(g, activation_fusion));
  EXPECT_NE(only(g, kRelu).meta.at("lowering").find("not both int8 or both int16"), std::string::npos);
}

void expect_not_fused(Graph& g, const char* op, const std::string& reason_part) {
  convert_to_cortex_m(g, TargetConfig{});
  EXPECT_FALSE(run_and_compare(g, activation_fusion));
  const std::string& lowering = only(g, op).meta.at("lowering");
  EXPECT_NE(lowering.find("float: not fused: " + reason_part), std::string::npos) << lowering;
}

TEST(ActivationFusion, ProducerWithOtherReadersKeepsTheRelu) {
  Graph g;
  const ValueId x = q_input(g, "x", {1, 3, 8, 8}, 0.05, 4);
  const ValueId c = folded_conv(g, x, 5, 3, kOut);
  g.set_outputs({folded(g, kRelu, c), c});
  expect_not_fused(g, kRelu, "its input");
}

TEST(ActivationFusion, RequantizingReluStays) {
  Graph g;
  const ValueId x = q_input(g, "x", {1, 3, 8, 8}, 0.05, 4);
  const ValueId c = folded_conv(g, x, 5, 3, kOut);
  g.set_outputs({quantized(g, g.call(kRelu, {c}, {})[0], qp(0.04, -128))});
  expect_not_fused(g, kRelu, "input and output");
}

TEST(ActivationFusion, ReluOnAGraphInputStays) {
  Graph g;
  const ValueId x = q_input(g, "x", {1, 3, 8, 8}, 0.05, 4);
  g.set_outputs({folded(g, kRelu, x)});
  expect_not_fused(g, kRelu, "its input is not computed");
}

TEST(ActivationFusion, DisjointRangeStays) {
  Graph g;
  const ValueId x = q_input(g, "x", {1, 3, 8, 8}, 0.05, 4);
  const ValueId r = folded(g, kRelu, folded_conv(g, x, 5, 3, kOut));
  g.set_outputs({folded(g, kClamp, r, {{"min", -2.0}, {"max", -1.0}})});
  convert_to_cortex_m(g, TargetConfig{});
  EXPECT_TRUE(run_and_compare(g, activation_fusion));  // the relu fuses, the clamp cannot
  EXPECT_EQ(count(g, kRelu), 0);
  EXPECT_NE(only(g, kClamp).meta.at("lowering").find("does not meet"), std::string::npos);
}

TEST(ActivationFusion, HardsigmoidIsLeftAlone) {
  Graph g;
  const ValueId x = q_input(g, "x", {1, 3, 8, 8}, 0.05, 4);
  const ValueId c = folded_conv(g, x, 5, 3, kOut);
  const ValueId hs = g.call("aten.hardsigmoid.default", {c}, {})[0];
  g.set_outputs({quantized(g, hs, qp(1.0 / 256, -128))});
  convert_to_cortex_m(g, TargetConfig{});
  EXPECT_FALSE(run_and_compare(g, activation_fusion));
  EXPECT_EQ(count(g, "aten.hardsigmoid.default"), 1);
}

}  // namespace
}  // namespace cortexm
