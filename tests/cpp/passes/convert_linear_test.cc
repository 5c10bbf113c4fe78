// ConvertToCortexM on linear and addmm: quantized_linear with [N, K] weights and per-channel
// multipliers, within 1 LSB of the folded graph and bit-exact against a plain integer loop.
#include "int16_test_util.h"

namespace cortexm {
namespace {

using namespace testing;

constexpr const char* kLinear = "aten.linear.default";
constexpr const char* kAddmm = "aten.addmm.default";
constexpr const char* kQLinear = "cortex_m.quantized_linear.default";

const int64_t kK = 24, kN = 6;
const double kSIn = 0.04;

std::vector<double> weight_scales() {
  std::vector<double> s;
  for (int64_t n = 0; n < kN; ++n) s.push_back(0.003 * (1.0 + 0.4 * n));
  return s;
}

std::vector<double> bias_scales() {
  std::vector<double> s;
  for (double w : weight_scales()) s.push_back(kSIn * w);
  return s;
}

QuantParams out_qparams() { return qp(kSIn * 0.005 * 74 * 73 * std::sqrt(double(kK)) / 40, -6); }

// out[m, n] = clamp(requantize(bias[n] + sum_k (x - zp_in) * (w[n, k] - zp_w)) + zp_out).
Tensor reference_linear(const Tensor& x, const Tensor& w_nk, const std::vector<int32_t>& bias,
                        const std::vector<double>& w_scales, int64_t w_zp, const QuantParams& q_in,
                        const QuantParams& q_out) {
  const int64_t rows = x.numel() / kK;
  std::vector<int64_t> shape = x.shape();
  shape.back() = kN;
  Tensor out(int8_info(shape, q_out));
  for (int64_t m = 0; m < rows; ++m)
    for (int64_t n = 0; n < kN; ++n) {
      int32_t acc = bias.empty() ? 0 : bias[n];
      for (int64_t k = 0; k < kK; ++k)
        acc += (x.data<int8_t>()[m * kK + k] - static_cast<int32_t>(q_in.zero_points[0])) *
               (w_nk.data<int8_t>()[n * kK + k] - static_cast<int32_t>(w_zp));
      const QuantizedMultiplier qm = quantize_multiplier(kSIn * w_scales[n] / q_out.scales[0]);
      const int32_t v = requantize(acc, qm.multiplier, qm.shift) + int32_t(q_out.zero_points[0]);
      out.data<int8_t>()[m * kN + n] = static_cast<int8_t>(clamp(v, -128, 127));
    }
  return out;
}

void expect_exact(Graph& g, const Tensor& w_nk, const std::vector<int32_t>& bias,
                  const std::vector<double>& w_scales, int64_t w_zp = 0) {
  const std::vector<Tensor> inputs = random_inputs(g, 7);
  const Tensor got = run_graph(g, inputs)[0];
  const Tensor want = reference_linear(inputs[0], w_nk, bias, w_scales, w_zp,
                                       *g.value(g.inputs()[0]).info.qparams, out_qparams());
  ASSERT_EQ(got.shape(), want.shape());
  EXPECT_EQ(std::memcmp(got.raw(), want.raw(), want.nbytes()), 0);
}

TEST(ConvertLinear, PerChannelWithBiasOnRank3Input) {
  Graph g;
  const ValueId x = q_input(g, "x", {2, 5, kK}, kSIn, 3);
  const ValueId w = int8_const(g, "w", {kN, kK}, qp_channels(weight_scales(), 0), 11);
  const std::vector<int32_t> bias = random_int32s(kN, -3000, 3000, 12);
  const ValueId b = int32_const(g, "b", bias, qp_channels(bias_scales(), 0));
  const Tensor w_data = g.value(w).data;
  g.set_outputs({quantized(g, g.call(kLinear, {x, w, b}, {})[0], out_qparams())});
  run_and_compare_lsb(g, convert_to_cortex_m);
  EXPECT_EQ(count(g, kLinear), 0);
  EXPECT_EQ(g.num_nodes(), 1u);
  const Node& lin = only(g, kQLinear);
  EXPECT_EQ(lin.meta.at("lowering"), "cortex_m");
  EXPECT_EQ(attr_i(lin, "input_offset"), -3);
  EXPECT_EQ(attr_i(lin, "filter_offset"), 0);
  EXPECT_EQ(attr_i(lin, "output_offset"), -6);
  EXPECT_EQ(attr_ints(lin, "requantize_multipliers").size(), static_cast<size_t>(kN));
  EXPECT_EQ(g.value(lin.inputs[1]).info.shape, (std::vector<int64_t>{kN, kK}));
  expect_exact(g, w_data, bias, weight_scales());
}

TEST(ConvertLinear, Int16QuantizedBiasAtItsScaleIsTakenExactly) {
  // quantized_linear_s16's int64 bias is the int32 bias itself, also beyond float32's 2^24.
  const std::vector<int32_t> values = {16777217, -33554435, 2147483647, -2147483647, 123, 0};
  Graph g;
  const ValueId x = g.add_input("x", int16_info({2, kK}, qp16(kSIn)));
  const ValueId w = int8_const(g, "w", {kN, kK}, qp_channels(weight_scales(), 0), 11);
  const ValueId b = int32_const(g, "b", values, qp_channels(bias_scales(), 0));
  g.set_outputs({quantized_as(g, g.call(kLinear, {x, w, b}, {})[0], DType::kInt16, qp16(1e3))});
  convert_to_cortex_m(g, TargetConfig{});
  const Value& bias = g.value(only(g, "cortex_m.quantized_linear_s16.default").inputs[2]);
  ASSERT_EQ(bias.info.dtype, DType::kInt64);
  for (int64_t n = 0; n < kN; ++n) EXPECT_EQ(bias.data.data<int64_t>()[n], values[size_t(n)]);
}

TEST(ConvertLinear, NoBiasGetsZeroBias) {
  Graph g;
  const ValueId x = q_input(g, "x", {3, kK}, kSIn, -128);
  const ValueId w = int8_const(g, "w", {kN, kK}, qp_channels(weight_scales(), 0), 13);
  const Tensor w_data = g.value(w).data;
  g.set_outputs({quantized(g, g.call(kLinear, {x, w}, {})[0], out_qparams())});
  run_and_compare_lsb(g, convert_to_cortex_m);
  const Value& b = g.value(only(g, kQLinear).inputs[2]);
  EXPECT_EQ(b.info.dtype, DType::kInt32);
  for (int64_t n = 0; n < kN; ++n) EXPECT_EQ(b.data.data<int32_t>()[n], 0);
  expect_exact(g, w_data, {}, weight_scales());
}

TEST(ConvertLinear, PerTensorAsymmetricWeightsUseFilterOffset) {
  Graph g;
  const ValueId x = q_input(g, "x", {4, kK}, kSIn, 1);
  const ValueId w = int8_const(g, "w", {kN, kK}, qp(0.004, 5), 14);
  const Tensor w_data = g.value(w).data;
  g.set_outputs({quantized(g, g.call(kLinear, {x, w}, {})[0], out_qparams())});
  run_and_compare_lsb(g, convert_to_cortex_m);
  EXPECT_EQ(attr_i(only(g, kQLinear), "filter_offset"), -5);
  expect_exact(g, w_data, {}, std::vector<double>(kN, 0.004), 5);
}

// What PropagateQParams leaves: addmm(bias, x, permute_copy(w [N, K]) quantized along axis 1).
TEST(ConvertLinear, AddmmWithPermutedWeight) {
  Graph g;
  const ValueId x = q_input(g, "x", {3, kK}, kSIn, 3);
  const ValueId w = int8_const(g, "w", {kN, kK}, qp_channels(weight_scales(), 0), 15);
  const Tensor w_data = g.value(w).data;
  const ValueId wt =
      g.call("aten.permute_copy.default", {w}, {{"dims", std::vector<int64_t>{1, 0}}})[0];
  g.mutable_value(wt).info.qparams = qp_channels(weight_scales(), 1);
  const std::vector<int32_t> bias = random_int32s(kN, -3000, 3000, 16);
  const ValueId b = int32_const(g, "b", bias, qp_channels(bias_scales(), 0));
  g.set_outputs({quantized(g, g.call(kAddmm, {b, x, wt}, {})[0], out_qparams())});
  run_and_compare_lsb(g, convert_to_cortex_m);
  EXPECT_EQ(count(g, kAddmm), 0);
  EXPECT_EQ(g.value(only(g, kQLinear).inputs[1]).info.shape, (std::vector<int64_t>{kN, kK}));
  expect_exact(g, w_data, bias, weight_scales());
  EXPECT_EQ(g.dead_code_elimination(), 1);  // the permute nothing reads
}

TEST(ConvertLinear, AddmmWithConstantTransposedWeightAndRowBias) {
  Graph g;
  const ValueId x = q_input(g, "x", {2, kK}, kSIn, 0);
  const ValueId w_kn = int8_const(g, "w", {kK, kN}, qp_channels(weight_scales(), 1), 17);
  const Tensor kn = g.value(w_kn).data;
  Tensor nk(int8_info({kN, kK}, qp(1, 0)));
  for (int64_t n = 0; n < kN; ++n)
    for (int64_t k = 0; k < kK; ++k) nk.data<int8_t>()[n * kK + k] = kn.data<int8_t>()[k * kN + n];
  // A [1, N] float bias.
  Tensor b(float_info({1, kN}));
  for (int64_t n = 0; n < kN; ++n)
    b.data<float>()[n] = static_cast<float>(bias_scales()[n] * (n * 100 - 250));
  const ValueId bv = g.add_constant("b", b);
  g.set_outputs({quantized(g, g.call(kAddmm, {bv, x, w_kn}, {})[0], out_qparams())});
  run_and_compare_lsb(g, convert_to_cortex_m);
  std::vector<int32_t> bias;
  for (int64_t n = 0; n < kN; ++n) bias.push_back(static_cast<int32_t>(n * 100 - 250));
  expect_exact(g, nk, bias, weight_scales());
}

TEST(ConvertLinear, FloatOutputWithHardsigmoidTail) {
  Graph g;
  const ValueId x = q_input(g, "x", {5, kK}, kSIn, 3);
  const ValueId w = int8_const(g, "w", {kN, kK}, qp_channels(weight_scales(), 0), 18);
  const ValueId y = g.call(kLinear, {x, w}, {})[0];
  const ValueId hs = g.call("aten.hardsigmoid.default", {y}, {})[0];
  g.set_outputs({quantized(g, hs, qp(1.0 / 255, -128))});
  run_and_compare_lsb(g, convert_to_cortex_m);
  EXPECT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(only(g, kQLinear).meta.at("fused_activation"), "aten.hardsigmoid.default");
}

TEST(ConvertLinear, AddmmWithAlphaStaysFloat) {
  Graph g;
  const ValueId x = q_input(g, "x", {2, kK}, kSIn, 0);
  const ValueId w_kn = int8_const(g, "w", {kK, kN}, qp_channels(weight_scales(), 1), 17);
  const ValueId b = float_const(g, "b", {kN}, 3, 0.01f);
  g.set_outputs({quantized(g, g.call(kAddmm, {b, x, w_kn}, {{"alpha", 2.0}})[0], out_qparams())});
  EXPECT_FALSE(run_and_compare(g, convert_to_cortex_m));
  EXPECT_EQ(only(g, kAddmm).meta.at("lowering"), "float: addmm alpha != 1");
}

TEST(ConvertLinear, ActivationTimesActivationStaysFloat) {
  Graph g;
  const ValueId x = q_input(g, "x", {2, kK}, kSIn, 0);
  const ValueId y = q_input(g, "y", {kK, kN}, kSIn, 0);
  const ValueId b = float_const(g, "b", {kN}, 3, 0.01f);
  g.set_outputs({quantized(g, g.call(kAddmm, {b, x, y}, {})[0], out_qparams())});
  EXPECT_FALSE(run_and_compare(g, convert_to_cortex_m));
  EXPECT_NE(only(g, kAddmm).meta.at("lowering").find("neither a constant"), std::string::npos);
}

}  // namespace
}  // namespace cortexm
