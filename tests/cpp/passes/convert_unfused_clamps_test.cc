// ConvertUnfusedClamps: clamps ActivationFusion left become tables, exact (run_and_compare feeds
// every int8 value) on graphs ConvertToCortexM and ActivationFusion ran on first.
#include "convert_test_util.h"

namespace cortexm {
namespace {

using namespace testing;

constexpr const char* kRelu = "aten.relu.default";
constexpr const char* kHardtanh = "aten.hardtanh.default";
constexpr const char* kClamp = "aten.clamp.default";
constexpr const char* kHardsigmoid = "aten.hardsigmoid.default";
constexpr const char* kTable = "cortex_m.quantized_activation.default";

const QuantParams kQ = qp(0.0731, -9);

ValueId folded(Graph& g, const char* op, ValueId x, const QuantParams& q_out, Attrs attrs = {}) {
  return quantized(g, g.call(op, {x}, std::move(attrs))[0], q_out);
}

// Lowers and fuses what can fuse, then converts the rest exactly; returns the number of tables.
int64_t lower_fuse_convert(Graph& g) {
  convert_to_cortex_m(g, TargetConfig{});
  activation_fusion(g, TargetConfig{});
  EXPECT_TRUE(run_and_compare(g, convert_unfused_clamps));
  EXPECT_EQ(count(g, kRelu) + count(g, kHardtanh) + count(g, kClamp) + count(g, kHardsigmoid), 0);
  return count(g, kTable);
}

// silero's decoder: the relu reads a value that another op reads too (the LSTM's h).
TEST(ConvertUnfusedClamps, ReluOnAValueWithOtherReaders) {
  Graph g;
  const ValueId a = q_input(g, "a", {1, 4, 9, 9}, 0.05, 3);
  const ValueId b = q_input(g, "b", {1, 4, 9, 9}, 0.04, -3);
  const ValueId h = quantized(g, g.call("aten.mul.Tensor", {a, b}, {})[0], kQ);
  g.set_outputs({folded(g, kRelu, h, kQ), h});
  EXPECT_EQ(lower_fuse_convert(g), 1);
  EXPECT_EQ(attr_i(only(g, "cortex_m.quantized_mul.default"), "activation_min"), -128);
  EXPECT_EQ(only(g, kTable).meta.at("lowering"), "cortex_m");
}

TEST(ConvertUnfusedClamps, ReluOnAGraphInputWithAnotherOutputScale) {
  Graph g;
  const ValueId x = q_input(g, "x", {2, 200}, 0.05, 4);
  g.set_outputs({folded(g, kRelu, x, qp(0.031, -128))});
  EXPECT_EQ(lower_fuse_convert(g), 1);
}

TEST(ConvertUnfusedClamps, HardtanhClampAndHardsigmoidOnInputs) {
  Graph g;
  const ValueId x = q_input(g, "x", {1, 300}, 0.05, 127);  // only negative values and zero
  const ValueId y = q_input(g, "y", {3, 100}, 0.11, -128);
  const ValueId z = q_input(g, "z", {300}, 0.02, 0);
  g.set_outputs({folded(g, kHardtanh, x, qp(0.01, 0), {{"min_val", -1.5}, {"max_val", 0.5}}),
                 folded(g, kClamp, y, qp(0.11, -128), {{"min", 3.0}, {"max", NoneAttr{}}}),
                 folded(g, kHardsigmoid, z, qp(1.0 / 256, -128))});
  EXPECT_EQ(lower_fuse_convert(g), 3);
}

// A clamp whose range misses the input's: every table entry is the same bound.
TEST(ConvertUnfusedClamps, DisjointClampIsAConstantTable) {
  Graph g;
  const ValueId x = q_input(g, "x", {1, 256}, 0.05, 4);
  g.set_outputs({folded(g, kClamp, x, kQ, {{"min", 50.0}, {"max", 60.0}})});
  EXPECT_EQ(lower_fuse_convert(g), 1);
}

TEST(ConvertUnfusedClamps, FusedReluIsNotTouched) {
  Graph g;
  const ValueId a = q_input(g, "a", {1, 4, 8, 8}, 0.05, 3);
  const ValueId b = q_input(g, "b", {1, 4, 8, 8}, 0.04, -3);
  const ValueId sum = quantized(g, g.call("aten.add.Tensor", {a, b}, {})[0], kQ);
  g.set_outputs({folded(g, kRelu, sum, kQ)});
  convert_to_cortex_m(g, TargetConfig{});
  EXPECT_TRUE(activation_fusion(g, TargetConfig{}));
  EXPECT_FALSE(run_and_compare(g, convert_unfused_clamps));
  EXPECT_EQ(count(g, kTable), 0);
}

TEST(ConvertUnfusedClamps, FloatReluIsNotTouched) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({2, 8}));
  g.set_outputs({g.call(kRelu, {x}, {})[0]});
  EXPECT_FALSE(run_and_compare(g, convert_unfused_clamps));
  EXPECT_EQ(count(g, kRelu), 1);
}

}  // namespace
}  // namespace cortexm
