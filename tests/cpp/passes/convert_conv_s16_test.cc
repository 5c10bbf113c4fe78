// ConvertToCortexM on convolutions of symmetric int16 values: quantized_conv2d_s16 with the
// requantize of arm_nn_requantize_s64, an int8 output through requantize_s16, within 1 LSB of the
// folded graph; other int16 inputs stay float.
#include "cortexm/kernels/requantize_s16.h"
#include "int16_test_util.h"
#include "passes/convert_to_cortex_m.h"

namespace cortexm {
namespace {

using namespace testing;

constexpr const char* kConvS16 = "cortex_m.quantized_conv2d_s16.default";
constexpr const char* kRequantizeS16 = "cortex_m.requantize_s16.default";

// Conv1d(c_in, c_out, kernel, stride) on an int16 x at scale 1e-4; per-channel int8 weights; an
// int32 bias when asked (random, or bias_values) at the scales 1e-4 * s_w[c].
ValueId conv1d(Graph& g, QuantParams q_in, int64_t c_in, int64_t c_out, int64_t kernel,
               int64_t stride, int64_t padding, bool bias,
               const std::vector<int32_t>& bias_values = {}) {
  const ValueId x = g.add_input("x", int16_info({2, c_in, 40}, std::move(q_in)));
  std::vector<double> w_scales;
  for (int64_t o = 0; o < c_out; ++o) w_scales.push_back(0.004 * (1.0 + 0.37 * (o % 5)));
  const ValueId w = int8_const(g, "w", {c_out, c_in, kernel}, qp_channels(w_scales, 0), 3);
  ValueId b = kNoValue;
  if (bias) {
    std::vector<double> b_scales;
    for (double s : w_scales) b_scales.push_back(1e-4 * s);
    b = int32_const(g, "b",
                    bias_values.empty() ? random_int32s(size_t(c_out), -200000, 200000, 5)
                                        : bias_values,
                    qp_channels(b_scales, 0));
  }
  return g.call(kConv, {x, w, b},
                {{"stride", std::vector<int64_t>{stride}},
                 {"padding", std::vector<int64_t>{padding}},
                 {"dilation", std::vector<int64_t>{1}},
                 {"groups", int64_t{1}}})[0];
}

TEST(ConvertConvS16, StftLikeInt16Output) {
  Graph g;
  // Sums of std ~ 8192 * 74 * sqrt(16) in units of 1e-4 * 0.004: outputs of a few thousand LSB.
  const ValueId y = conv1d(g, qp16(1e-4), 1, 10, 16, 8, 0, false);
  g.set_outputs({quantized_as(g, y, DType::kInt16, qp16(1e-4 * 0.006 * 8192 * 74 * 4 / 3000))});
  EXPECT_LE(run_and_compare_int(g, convert_to_cortex_m), 1);
  const Node& conv = only(g, kConvS16);
  EXPECT_EQ(conv.meta.at("lowering"), "cortex_m");
  EXPECT_EQ(count(g, kConv), 0);
  EXPECT_EQ(count(g, kRequantizeS16), 0);
  EXPECT_EQ(attr_ints(conv, "stride"), (std::vector<int64_t>{1, 8}));
  const Value& w = g.value(conv.inputs[1]);
  EXPECT_EQ(w.info.shape, (std::vector<int64_t>{10, 1, 16, 1}));
  EXPECT_EQ(g.value(conv.inputs[2]).info.dtype, DType::kInt64);
  for (int64_t s : attr_ints(conv, "requantize_shifts")) EXPECT_LE(s, 7);
}

TEST(ConvertConvS16, Int8OutputThroughRelu) {
  Graph g;
  const ValueId y = conv1d(g, qp16(1e-4), 5, 7, 3, 1, 1, true);
  const ValueId r = g.call("aten.relu.default", {y}, {})[0];
  const QuantParams q_out = qp(1e-4 * 0.006 * 8192 * 74 * 4 / 60, -128);
  g.set_outputs({quantized_as(g, r, DType::kInt8, q_out)});
  EXPECT_LE(run_and_compare_int(g, convert_to_cortex_m), 1);
  EXPECT_EQ(count(g, kConvS16), 1);
  const Node& rq = only(g, kRequantizeS16);
  EXPECT_EQ(attr_i(rq, "activation_min"), -128);  // relu's 0
  EXPECT_EQ(attr_i(rq, "output_zero_point"), -128);
  EXPECT_EQ(count(g, "aten.relu.default"), 0);
  // The int16 value between them spans the int8 range: 255 LSB of the output over 32767.
  const QuantParams& mid = *g.value(rq.inputs[0]).info.qparams;
  EXPECT_NEAR(mid.scales[0], 255 * q_out.scales[0] / 32767, 1e-12);
}

TEST(ConvertConvS16, QuantizedBiasAtItsScaleIsTakenExactly) {
  // Beyond 2^24 a float32 holds only even integers (and int32's ends round to +-2^31): the int64
  // bias must be the int32 bias itself, never its value through float32.
  const std::vector<int32_t> values = {16777217, -33554435, 2147483647, -2147483647, 123, 0};
  Graph g;
  const ValueId y = conv1d(g, qp16(1e-4), 3, 6, 3, 1, 1, true, values);
  g.set_outputs({quantized_as(g, y, DType::kInt16, qp16(1.0))});
  convert_to_cortex_m(g, TargetConfig{});
  const Value& bias = g.value(only(g, kConvS16).inputs[2]);
  ASSERT_EQ(bias.info.dtype, DType::kInt64);
  for (size_t c = 0; c < values.size(); ++c) EXPECT_EQ(bias.data.data<int64_t>()[c], values[c]);
}

TEST(ConvertConvS16, AsymmetricInt16InputStaysFloat) {
  Graph g;
  QuantParams q = qp16(1e-4);
  q.zero_points = {3};
  const ValueId y = conv1d(g, q, 1, 4, 8, 4, 0, false);
  g.set_outputs({quantized_as(g, y, DType::kInt16, qp16(0.01))});
  convert_to_cortex_m(g, TargetConfig{});
  EXPECT_EQ(count(g, kConvS16), 0);
  EXPECT_NE(only(g, kConv).meta.at("lowering").find("not symmetric int16"), std::string::npos);
}

TEST(ConvertConvS16, ShiftAboveSevenStaysFloat) {
  Graph g;
  // s_in * s_w / s_out of about 2^9: arm_nn_requantize_s64 takes shifts up to 7 only.
  const ValueId y = conv1d(g, qp16(1e-4), 1, 4, 8, 4, 0, false);
  g.set_outputs({quantized_as(g, y, DType::kInt16, qp16(1e-9))});
  convert_to_cortex_m(g, TargetConfig{});
  EXPECT_EQ(count(g, kConvS16), 0);
  EXPECT_NE(only(g, kConv).meta.at("lowering").find("exceeds 7"), std::string::npos);
}

}  // namespace
}  // namespace cortexm
