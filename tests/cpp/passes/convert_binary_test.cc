// ConvertToCortexM on add / mul: TFLite's multipliers, broadcasting, within 1 LSB of the folded
// graph.
#include "convert_test_util.h"
#include "cortexm/kernels/quantized_add.h"

namespace cortexm {
namespace {

using namespace testing;

constexpr const char* kAdd = "aten.add.Tensor";
constexpr const char* kMul = "aten.mul.Tensor";
constexpr const char* kQAdd = "cortex_m.quantized_add.default";
constexpr const char* kQMul = "cortex_m.quantized_mul.default";

Graph binary(const char* op, std::vector<int64_t> a_shape, std::vector<int64_t> b_shape,
             QuantParams qa, QuantParams qb, QuantParams qo, Attrs attrs = {}) {
  Graph g;
  const ValueId a = g.add_input("a", int8_info(std::move(a_shape), std::move(qa)));
  const ValueId b = g.add_input("b", int8_info(std::move(b_shape), std::move(qb)));
  g.set_outputs({quantized(g, g.call(op, {a, b}, std::move(attrs))[0], std::move(qo))});
  return g;
}

TEST(ConvertBinary, AddUsesTfliteMultipliers) {
  Graph g = binary(kAdd, {2, 3, 4, 5}, {2, 3, 4, 5}, qp(0.03, -4), qp(0.07, 9), qp(0.09, 2));
  run_and_compare_lsb(g, convert_to_cortex_m);
  EXPECT_EQ(g.num_nodes(), 1u);
  const Node& add = only(g, kQAdd);
  EXPECT_EQ(add.meta.at("lowering"), "cortex_m");
  const double twice_max = 2 * 0.07;
  const QuantizedMultiplier a = quantize_multiplier(0.03 / twice_max);
  const QuantizedMultiplier b = quantize_multiplier(0.07 / twice_max);
  const QuantizedMultiplier o = quantize_multiplier(twice_max / ((1 << kAddLeftShift) * 0.09));
  EXPECT_EQ(attr_i(add, "self_zero_point"), -4);
  EXPECT_EQ(attr_i(add, "self_multiplier"), a.multiplier);
  EXPECT_EQ(attr_i(add, "self_shift"), a.shift);
  EXPECT_EQ(attr_i(add, "other_zero_point"), 9);
  EXPECT_EQ(attr_i(add, "other_multiplier"), b.multiplier);
  EXPECT_EQ(attr_i(add, "other_shift"), b.shift);
  EXPECT_EQ(attr_i(add, "output_zero_point"), 2);
  EXPECT_EQ(attr_i(add, "output_multiplier"), o.multiplier);
  EXPECT_EQ(attr_i(add, "output_shift"), o.shift);
  EXPECT_EQ(attr_i(add, "activation_min"), -128);
  EXPECT_EQ(attr_i(add, "activation_max"), 127);
}

TEST(ConvertBinary, AddBroadcasts) {
  Graph g = binary(kAdd, {2, 3, 4, 5}, {1, 3, 1, 1}, qp(0.0517, 0), qp(0.0213, -20), qp(0.0611, 7));
  run_and_compare_lsb(g, convert_to_cortex_m);
  EXPECT_EQ(count(g, kQAdd), 1);
}

TEST(ConvertBinary, AddWithAlphaStaysFloat) {
  Graph g = binary(kAdd, {4, 5}, {4, 5}, qp(0.05, 0), qp(0.05, 0), qp(0.1, 0), {{"alpha", 2.0}});
  EXPECT_FALSE(run_and_compare(g, convert_to_cortex_m));
  EXPECT_EQ(only(g, kAdd).meta.at("lowering"), "float: alpha != 1");
}

TEST(ConvertBinary, AddWithFloatOperandStaysFloat) {
  Graph g;
  const ValueId a = q_input(g, "a", {4, 5}, 0.05, 0);
  const ValueId b = float_const(g, "b", {4, 5}, 1);
  g.set_outputs({quantized(g, g.call(kAdd, {a, b}, {})[0], qp(0.1, 0))});
  EXPECT_FALSE(run_and_compare(g, convert_to_cortex_m));
  EXPECT_NE(only(g, kAdd).meta.at("lowering").find("other"), std::string::npos);
}

// The kernel rejects empty extents (aten.add takes them): the rewrite is rolled back, the add
// stays float.
TEST(ConvertBinary, KernelRejectionLeavesTheGraphAsItWas) {
  Graph g = binary(kAdd, {2, 0, 3}, {1, 1, 3}, qp(0.05, 0), qp(0.05, 0), qp(0.1, 0));
  EXPECT_FALSE(run_and_compare(g, convert_to_cortex_m));
  EXPECT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(only(g, kAdd).meta.at("lowering").rfind("float: the cortex_m op rejects it", 0), 0u)
      << only(g, kAdd).meta.at("lowering");
}

TEST(ConvertBinary, MulUsesProductScale) {
  Graph g = binary(kMul, {2, 8, 9}, {2, 8, 9}, qp(0.05, 3), qp(0.04, -7), qp(0.3, -1));
  run_and_compare_lsb(g, convert_to_cortex_m);
  const Node& mul = only(g, kQMul);
  const QuantizedMultiplier o = quantize_multiplier(0.05 * 0.04 / 0.3);
  EXPECT_EQ(attr_i(mul, "self_zero_point"), 3);
  EXPECT_EQ(attr_i(mul, "other_zero_point"), -7);
  EXPECT_EQ(attr_i(mul, "output_zero_point"), -1);
  EXPECT_EQ(attr_i(mul, "output_multiplier"), o.multiplier);
  EXPECT_EQ(attr_i(mul, "output_shift"), o.shift);
}

TEST(ConvertBinary, MulBroadcastsAConstant) {
  Graph g;
  const ValueId a = q_input(g, "a", {1, 4, 3, 3}, 0.05, 3);
  const ValueId s = int8_const(g, "s", {1, 4, 1, 1}, qp(0.01, 0), 4);
  g.set_outputs({quantized(g, g.call(kMul, {a, s}, {})[0], qp(0.04, 0))});
  run_and_compare_lsb(g, convert_to_cortex_m);
  EXPECT_EQ(count(g, kQMul), 1);
}

}  // namespace
}  // namespace cortexm
