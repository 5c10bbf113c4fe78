// ConvertToCortexM on add / mul: TFLite's multipliers, broadcasting, within 1 LSB of the folded
// graph; int16 ones to the _s16 ops, int8 mixed with int16 stays float.
#include "convert_test_util.h"
#include "cortexm/kernels/quantized_add.h"
#include "cortexm/kernels/quantized_add_s16.h"
#include "int16_test_util.h"

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

constexpr const char* kQAdd16 = "cortex_m.quantized_add_s16.default";
constexpr const char* kQMul16 = "cortex_m.quantized_mul_s16.default";

Graph binary16(const char* op, std::vector<int64_t> a_shape, std::vector<int64_t> b_shape,
               double sa, double sb, double so) {
  Graph g;
  const ValueId a = g.add_input("a", int16_info(std::move(a_shape), qp16(sa)));
  const ValueId b = g.add_input("b", int16_info(std::move(b_shape), qp16(sb)));
  g.set_outputs({quantized_as(g, g.call(op, {a, b}, {})[0], DType::kInt16, qp16(so))});
  return g;
}

TEST(ConvertBinary, Int16AddUsesTfliteMultipliersWithLeftShift15) {
  Graph g = binary16(kAdd, {2, 3, 4, 5}, {2, 3, 4, 5}, 3.1e-4, 7.3e-4, 9.7e-4);
  EXPECT_LE(run_and_compare_int(g, convert_to_cortex_m), 1);
  EXPECT_EQ(g.num_nodes(), 1u);
  const Node& add = only(g, kQAdd16);
  EXPECT_EQ(add.meta.at("lowering"), "cortex_m");
  const double twice_max = 2 * 7.3e-4;
  const QuantizedMultiplier a = quantize_multiplier(3.1e-4 / twice_max);
  const QuantizedMultiplier b = quantize_multiplier(7.3e-4 / twice_max);
  const QuantizedMultiplier o = quantize_multiplier(twice_max / ((1 << kAddS16LeftShift) * 9.7e-4));
  EXPECT_EQ(attr_i(add, "self_multiplier"), a.multiplier);
  EXPECT_EQ(attr_i(add, "self_shift"), a.shift);
  EXPECT_EQ(attr_i(add, "other_multiplier"), b.multiplier);
  EXPECT_EQ(attr_i(add, "other_shift"), b.shift);
  EXPECT_EQ(attr_i(add, "output_multiplier"), o.multiplier);
  EXPECT_EQ(attr_i(add, "output_shift"), o.shift);
  EXPECT_EQ(attr_i(add, "activation_min"), -32768);
  EXPECT_EQ(attr_i(add, "activation_max"), 32767);
  EXPECT_EQ(g.value(add.outputs[0]).info.dtype, DType::kInt16);
}

TEST(ConvertBinary, Int16AddBroadcasts) {
  Graph g = binary16(kAdd, {2, 3, 4, 5}, {1, 3, 1, 1}, 5e-4, 2e-6, 4e-4);
  EXPECT_LE(run_and_compare_int(g, convert_to_cortex_m), 1);
  EXPECT_EQ(count(g, kQAdd16), 1);
}

TEST(ConvertBinary, Int16MulUsesProductScale) {
  Graph g = binary16(kMul, {2, 8, 9}, {9}, 3e-4, 2e-4, 1.9e-3);
  EXPECT_LE(run_and_compare_int(g, convert_to_cortex_m), 1);
  const Node& mul = only(g, kQMul16);
  const QuantizedMultiplier o = quantize_multiplier(3e-4 * 2e-4 / 1.9e-3);
  EXPECT_EQ(attr_i(mul, "output_multiplier"), o.multiplier);
  EXPECT_EQ(attr_i(mul, "output_shift"), o.shift);
  EXPECT_EQ(attr_i(mul, "activation_min"), -32768);
}

TEST(ConvertBinary, Int16SquareReadsOneValueTwice) {
  Graph g;
  const ValueId a = g.add_input("a", int16_info({3, 7}, qp16(1e-3)));
  g.set_outputs({quantized_as(g, g.call(kMul, {a, a}, {})[0], DType::kInt16, qp16(1e-3 * 1e-3 * 32768.0))});
  EXPECT_LE(run_and_compare_int(g, convert_to_cortex_m), 1);
  const Node& mul = only(g, kQMul16);
  EXPECT_EQ(mul.inputs[0], mul.inputs[1]);
}

// The folded graph saturates where a wrapping left shift would not: such a mul stays float.
TEST(ConvertBinary, Int16MulWhoseRequantizeWouldOverflowStaysFloat) {
  Graph g = binary16(kMul, {4, 5}, {4, 5}, 1.0, 1.0, 0.25);
  convert_to_cortex_m(g, TargetConfig{});
  EXPECT_EQ(count(g, kQMul16), 0);
  EXPECT_NE(only(g, kMul).meta.at("lowering").find("overflows int32"), std::string::npos)
      << only(g, kMul).meta.at("lowering");
}

TEST(ConvertBinary, Int8MixedWithInt16StaysFloat) {
  Graph g;
  const ValueId a = g.add_input("a", int16_info({4, 5}, qp16(1e-3)));
  const ValueId b = q_input(g, "b", {4, 5}, 0.05, 3);
  g.set_outputs({quantized_as(g, g.call(kAdd, {a, b}, {})[0], DType::kInt16, qp16(1e-2))});
  convert_to_cortex_m(g, TargetConfig{});
  EXPECT_EQ(count(g, kQAdd16) + count(g, kQAdd), 0);
  const std::string& why = only(g, kAdd).meta.at("lowering");
  EXPECT_NE(why.find("self is int16, other int8, output int16"), std::string::npos) << why;
}

}  // namespace
}  // namespace cortexm
