// ConvertToCortexM on sqrt(a * a + b * b) of int16 a, b (the quantizer's fuse_magnitude): one
// quantized_magnitude_s16 replaces the mul, mul, add and sqrt, within 1 LSB of the folded graph;
// unequal scales or other shapes of the expression stay float.
#include "int16_test_util.h"
#include "passes/convert_to_cortex_m.h"

namespace cortexm {
namespace {

using namespace testing;

constexpr const char* kMagnitude = "cortex_m.quantized_magnitude_s16.default";
constexpr const char* kMul = "aten.mul.Tensor";
constexpr const char* kAdd = "aten.add.Tensor";
constexpr const char* kSqrt = "aten.sqrt.default";

// sqrt(a * a + b * c): c is b unless other_c.
Graph magnitude(double scale_a, double scale_b, DType out_dtype, QuantParams q_out,
                bool other_c = false) {
  Graph g;
  const ValueId a = g.add_input("a", int16_info({2, 9, 4}, qp16(scale_a)));
  const ValueId b = g.add_input("b", int16_info({2, 9, 4}, qp16(scale_b)));
  const ValueId c = other_c ? g.add_input("c", int16_info({2, 9, 4}, qp16(scale_b))) : b;
  const ValueId aa = g.call(kMul, {a, a}, {})[0];
  const ValueId bc = g.call(kMul, {b, c}, {})[0];
  const ValueId sum = g.call(kAdd, {aa, bc}, {{"alpha", 1.0}})[0];
  g.set_outputs({quantized_as(g, g.call(kSqrt, {sum}, {})[0], out_dtype, std::move(q_out))});
  return g;
}

TEST(ConvertMagnitude, Int16Output) {
  Graph g = magnitude(5e-4, 5e-4, DType::kInt16, qp16(5e-4 * 1.4143 * 32768 / 32767));
  EXPECT_LE(run_and_compare_int(g, convert_to_cortex_m), 1);
  const Node& m = only(g, kMagnitude);
  EXPECT_EQ(m.meta.at("lowering"), "cortex_m");
  EXPECT_EQ(g.value(m.inputs[0]).name, "a");
  EXPECT_EQ(g.value(m.inputs[1]).name, "b");
  EXPECT_EQ(count(g, kMul) + count(g, kAdd) + count(g, kSqrt), 0);
}

TEST(ConvertMagnitude, Int8Output) {
  Graph g = magnitude(5e-4, 5e-4, DType::kInt8, qp(5e-4 * 20000 / 255, -128));
  EXPECT_LE(run_and_compare_int(g, convert_to_cortex_m), 1);
  EXPECT_EQ(count(g, kMagnitude), 1);
  EXPECT_EQ(count(g, kSqrt), 0);
}

TEST(ConvertMagnitude, UnequalScalesStayFloat) {
  Graph g = magnitude(5e-4, 7e-4, DType::kInt16, qp16(1e-3));
  convert_to_cortex_m(g, TargetConfig{});
  EXPECT_EQ(count(g, kMagnitude), 0);
  EXPECT_EQ(count(g, kMul), 2);
  EXPECT_NE(only(g, kSqrt).meta.at("lowering").find("different scales"), std::string::npos);
}

TEST(ConvertMagnitude, ProductOfTwoValuesIsNotAMagnitude) {
  Graph g = magnitude(5e-4, 5e-4, DType::kInt16, qp16(1e-3), true);
  convert_to_cortex_m(g, TargetConfig{});
  EXPECT_EQ(count(g, kMagnitude), 0);
  EXPECT_EQ(count(g, kSqrt), 1);  // tried as a table, whose input must be int8
  EXPECT_EQ(only(g, kSqrt).meta.at("lowering").rfind("float: ", 0), 0u);
}

}  // namespace
}  // namespace cortexm
