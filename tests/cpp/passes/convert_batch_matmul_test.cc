// ConvertToCortexM on bmm / mm of two int8 activations: the rhs transposed by an int8
// permute_copy (or the permute it came from reused), within 1 LSB of the folded graph; an
// attention block (q @ k^T, softmax left float, @ v) gets both matmuls lowered.
#include "convert_test_util.h"

namespace cortexm {
namespace {

using namespace testing;

constexpr const char* kBmm = "aten.bmm.default";
constexpr const char* kPermute = "aten.permute_copy.default";
constexpr const char* kQBmm = "cortex_m.quantized_batch_matmul.default";

TEST(ConvertBatchMatmul, BmmInsertsAnInt8Transpose) {
  Graph g;
  const ValueId a = q_input(g, "a", {3, 5, 8}, 0.05, -3);
  const ValueId b = q_input(g, "b", {3, 8, 6}, 0.04, 7);
  g.set_outputs({quantized(g, g.call(kBmm, {a, b}, {})[0], qp(0.3, 2))});
  run_and_compare_lsb(g, convert_to_cortex_m);
  const Node& mm = only(g, kQBmm);
  EXPECT_EQ(attr_i(mm, "lhs_offset"), 3);
  EXPECT_EQ(attr_i(mm, "rhs_offset"), -7);
  EXPECT_EQ(attr_i(mm, "output_offset"), 2);
  const QuantizedMultiplier m = quantize_multiplier(0.05 * 0.04 / 0.3);
  EXPECT_EQ(attr_i(mm, "output_multiplier"), m.multiplier);
  EXPECT_EQ(attr_i(mm, "output_shift"), m.shift);
  const Node& permute = g.node(g.producer(mm.inputs[1]));
  EXPECT_EQ(permute.op, kPermute);
  EXPECT_EQ(attr_ints(permute, "dims"), (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(g.value(mm.inputs[1]).info.dtype, DType::kInt8);
}

TEST(ConvertBatchMatmul, BmmReusesTheTransposedOperand) {
  Graph g;
  const ValueId q = q_input(g, "q", {2, 7, 16}, 0.05, 1);
  const ValueId k = q_input(g, "k", {2, 9, 16}, 0.06, -2);
  const ValueId kt = g.call(kPermute, {k}, {{"dims", std::vector<int64_t>{0, 2, 1}}})[0];
  g.set_outputs({quantized(g, g.call(kBmm, {q, kt}, {})[0], qp(0.5, 0))});
  run_and_compare_lsb(g, convert_to_cortex_m);
  EXPECT_EQ(only(g, kQBmm).inputs[1], k);
}

TEST(ConvertBatchMatmul, MmThroughBatchOne) {
  Graph g;
  const ValueId a = q_input(g, "a", {5, 11}, 0.05, 0);
  const ValueId b = q_input(g, "b", {11, 4}, 0.02, -128);
  g.set_outputs({quantized(g, g.call("aten.mm.default", {a, b}, {})[0], qp(0.1, -5))});
  run_and_compare_lsb(g, convert_to_cortex_m);
  EXPECT_EQ(count(g, kQBmm), 1);
}

TEST(ConvertBatchMatmul, AttentionBlock) {
  Graph g;
  const ValueId q = q_input(g, "q", {4, 10, 8}, 0.05, 3);
  const ValueId k = q_input(g, "k", {4, 10, 8}, 0.045, -1);
  const ValueId v = q_input(g, "v", {4, 10, 8}, 0.07, 0);
  const ValueId kt = g.call(kPermute, {k}, {{"dims", std::vector<int64_t>{0, 2, 1}}})[0];
  const ValueId scores = quantized(g, g.call(kBmm, {q, kt}, {})[0], qp(0.12, -10));
  const ValueId probs = quantized(
      g, g.call("aten._softmax.default", {scores}, {{"dim", int64_t{-1}}})[0], qp(1.0 / 256, -128));
  g.set_outputs({quantized(g, g.call(kBmm, {probs, v}, {})[0], qp(0.06, 1))});
  run_and_compare_lsb(g, convert_to_cortex_m);
  EXPECT_EQ(count(g, kQBmm), 2);
  EXPECT_EQ(count(g, kBmm), 0);
}

TEST(ConvertBatchMatmul, FloatOperandStaysFloat) {
  Graph g;
  const ValueId a = q_input(g, "a", {2, 3, 4}, 0.05, 0);
  const ValueId b = float_const(g, "b", {2, 4, 5}, 1);
  g.set_outputs({quantized(g, g.call(kBmm, {a, b}, {})[0], qp(0.1, 0))});
  EXPECT_FALSE(run_and_compare(g, convert_to_cortex_m));
  EXPECT_NE(only(g, kBmm).meta.at("lowering").find("mat2"), std::string::npos);
}

}  // namespace
}  // namespace cortexm
