#include "pass_test_util.h"

namespace cortexm {
namespace {

using testing::ramp;
using testing::run_and_compare;

constexpr const char* kConv = "cortex_m.quantized_conv2d.default";
constexpr const char* kLinear = "cortex_m.quantized_linear.default";

TensorInfo info(DType dtype, std::vector<int64_t> shape) {
  TensorInfo i;
  i.dtype = dtype;
  i.shape = std::move(shape);
  return i;
}

Tensor int32s(std::vector<int32_t> values) {
  Tensor t(info(DType::kInt32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) t.data<int32_t>()[i] = values[i];
  return t;
}

Attrs conv_attrs(int64_t input_offset, int64_t channels) {
  return {{"stride", std::vector<int64_t>{1, 2}},   {"padding", std::vector<int64_t>{1, 2}},
          {"dilation", std::vector<int64_t>{1, 1}}, {"input_offset", input_offset},
          {"output_offset", int64_t{-3}},
          {"requantize_multipliers", std::vector<int64_t>(channels, int64_t{1} << 30)},
          {"requantize_shifts", std::vector<int64_t>(channels, -6)}};
}

bool folded(const Graph& g, NodeId id) {
  return std::get<bool>(OpArgs(g.node(id).op, g.node(id).name, g.node(id).attrs).attr("bias_includes_input_offset"));
}

// Two convs share one bias constant: each gets its own folded bias, padded windows included, and
// the outputs stay bit-identical.
TEST(FoldInputOffsetIntoBias, SharedBiasGetsOneFoldedConstantPerNode) {
  Graph g;
  const ValueId x = g.add_input("x", info(DType::kInt8, {1, 6, 5, 7}));
  const ValueId w1 = g.add_constant("w1", ramp(info(DType::kInt8, {4, 3, 3, 6})));
  Tensor w2_data = ramp(info(DType::kInt8, {4, 3, 3, 6}));
  for (int64_t i = 0; i < w2_data.numel(); ++i) w2_data.data<int8_t>()[i] ^= 0x55;
  const ValueId w2 = g.add_constant("w2", w2_data);
  const ValueId b = g.add_constant("b", int32s({INT32_MAX, INT32_MIN, -7, 1000}));
  const ValueId y1 = g.call(kConv, {x, w1, b}, conv_attrs(128, 4))[0];
  const ValueId y2 = g.call(kConv, {x, w2, b}, conv_attrs(128, 4))[0];
  g.set_outputs({y1, y2});
  EXPECT_TRUE(run_and_compare(g, fold_input_offset_into_bias));
  for (NodeId id : g.order()) {
    EXPECT_TRUE(folded(g, id));
    EXPECT_NE(g.node(id).inputs[2], b);
  }
  EXPECT_NE(g.node(g.order()[0]).inputs[2], g.node(g.order()[1]).inputs[2]);
  EXPECT_FALSE(run_and_compare(g, fold_input_offset_into_bias));  // already folded
}

// A linear without bias gets one holding input_offset * (sum w + K * filter_offset).
TEST(FoldInputOffsetIntoBias, AbsentBiasBecomesAConstant) {
  Graph g;
  const ValueId x = g.add_input("x", info(DType::kInt8, {3, 5}));
  const ValueId w = g.add_constant("w", ramp(info(DType::kInt8, {2, 5})));
  const ValueId y = g.call(kLinear, {x, w, kNoValue},
                           {{"input_offset", int64_t{-127}}, {"filter_offset", int64_t{4}},
                            {"output_offset", int64_t{9}},
                            {"requantize_multipliers", std::vector<int64_t>{1 << 30}},
                            {"requantize_shifts", std::vector<int64_t>{-5}}})[0];
  g.set_outputs({y});
  EXPECT_TRUE(run_and_compare(g, fold_input_offset_into_bias));
  const Node& node = g.node(g.order()[0]);
  ASSERT_GT(node.inputs.size(), 2u);
  ASSERT_NE(node.inputs[2], kNoValue);
  const int8_t* wd = g.value(w).data.data<int8_t>();
  for (int oc = 0; oc < 2; ++oc) {
    int64_t sum = 0;
    for (int k = 0; k < 5; ++k) sum += wd[oc * 5 + k];
    EXPECT_EQ(g.value(node.inputs[2]).data.data<int32_t>()[oc], -127 * (sum + 5 * 4));
  }
}

// Input offset 0 and no bias: the flag alone, no constant of zeros.
TEST(FoldInputOffsetIntoBias, ZeroOffsetSetsTheFlagOnly) {
  Graph g;
  const ValueId x = g.add_input("x", info(DType::kInt8, {1, 6, 5, 7}));
  const ValueId w = g.add_constant("w", ramp(info(DType::kInt8, {4, 3, 3, 6})));
  g.set_outputs({g.call(kConv, {x, w, kNoValue}, conv_attrs(0, 4))[0]});
  const size_t constants = g.constants().size();
  EXPECT_TRUE(run_and_compare(g, fold_input_offset_into_bias));
  EXPECT_TRUE(folded(g, g.order()[0]));
  EXPECT_EQ(g.constants().size(), constants);
}

// A bias computed at run time cannot be folded: the node is left alone.
TEST(FoldInputOffsetIntoBias, RunTimeBiasIsLeftAlone) {
  Graph g;
  const ValueId x = g.add_input("x", info(DType::kInt8, {1, 6, 5, 7}));
  const ValueId b = g.add_input("b", info(DType::kInt32, {4}));
  const ValueId w = g.add_constant("w", ramp(info(DType::kInt8, {4, 3, 3, 6})));
  g.set_outputs({g.call(kConv, {x, w, b}, conv_attrs(17, 4))[0]});
  EXPECT_FALSE(run_and_compare(g, fold_input_offset_into_bias));
  EXPECT_FALSE(folded(g, g.order()[0]));
}

}  // namespace
}  // namespace cortexm
