#include "cortexm/kernels/quantized_log_softmax.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "gemmlowp_reference.h"
#include "random_data.h"

namespace cortexm {
namespace {

using namespace testing::gemmlowp_ref;

int32_t saturating(int64_t v) {
  return static_cast<int32_t>(std::clamp<int64_t>(v, INT32_MIN, INT32_MAX));
}

// TFLite's log_x_for_x_greater_than_or_equal_to_1_impl<5, 12>.
Fx<5> log_x(Fx<12> input) {
  using F0 = Fx<0>;
  using Acc = Fx<6>;
  const F0 log_2{1488522236}, sqrt_sqrt_half{1805811301}, sqrt_half{1518500250};
  const F0 one_quarter{536870912}, alpha_n{117049297}, alpha_d{127690142}, alpha_i{1057819769},
      alpha_f{638450708};
  const Acc shifted_quarter = rescale<6>(one_quarter);
  const F0 z_a{input.raw};
  const int z_a_headroom_plus_1 = clz(static_cast<uint32_t>(z_a.raw));
  const F0 r_a_tmp{saturating_shift(z_a.raw, z_a_headroom_plus_1 - 1)};
  const int32_t r_a_raw = saturating_shift((r_a_tmp * sqrt_half).raw, 1);
  const Acc z_a_pow_2_adj{
      saturating(int64_t(saturating_shift(12 - z_a_headroom_plus_1, 25)) + shifted_quarter.raw)};
  const F0 z_b = z_a * sqrt_half;
  const int z_b_headroom = clz(static_cast<uint32_t>(z_b.raw)) - 1;
  const int32_t r_b_raw = saturating_shift(z_a.raw, z_b_headroom);
  const Acc z_b_pow_2_adj{
      saturating(int64_t(saturating_shift(12 - z_b_headroom, 25)) - shifted_quarter.raw)};
  const F0 r{std::min(r_a_raw, r_b_raw)};
  const Acc z_pow_2_adj{std::max(z_a_pow_2_adj.raw, z_b_pow_2_adj.raw)};
  const int64_t half_sum = int64_t(r.raw) + sqrt_sqrt_half.raw;
  const F0 p{static_cast<int32_t>((half_sum + (half_sum >= 0 ? 1 : -1)) / 2)};
  F0 q = r - sqrt_sqrt_half;
  q = q + q;
  const F0 common_sq = q * q;
  const F0 num = q * r + q * common_sq * alpha_n;
  const F0 denom_minus_one_0 = p * (alpha_i + q + alpha_d * common_sq) + alpha_f * q;
  const F0 recip_denom = one_over_one_plus_x_for_x_in_0_1(denom_minus_one_0);
  const Acc num_scaled = rescale<6>(num);
  return rescale<5>(z_pow_2_adj * log_2 + num_scaled * recip_denom);
}

int32_t multiply_by_quantized_multiplier(int32_t x, int32_t multiplier, int shift) {
  const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  return rounding_divide(srdhm(wrap(int64_t(x) * (int64_t(1) << left)), multiplier), right);
}

// TFLite's reference_ops::LogSoftmax for int8, with PreprocessLogSoftmaxScalingExp's parameters
// computed here from the scale.
std::vector<int8_t> tflite_log_softmax(const std::vector<int8_t>& in, int rows, int depth,
                                       double input_scale, LogSoftmaxScaling* derived) {
  const double real = std::min(input_scale * double(1 << 26), double((int64_t(1) << 31) - 1));
  int shift = 0;
  int64_t multiplier = std::llround(std::frexp(real, &shift) * double(int64_t(1) << 31));
  if (multiplier == int64_t(1) << 31) multiplier /= 2, ++shift;
  const int diff_min =
      -static_cast<int>(std::floor(31.0 * double(int64_t(1) << 26) / double(int64_t(1) << shift)));
  const double reverse = double(int64_t(1) << (31 - shift)) / double(multiplier);
  int reverse_shift = 0;
  int64_t reverse_divisor = std::llround(std::frexp(reverse, &reverse_shift) * double(int64_t(1) << 31));
  if (reverse_divisor == int64_t(1) << 31) reverse_divisor /= 2, ++reverse_shift;
  if (reverse_shift < -31) reverse_divisor = 0, reverse_shift = 0;
  *derived = {static_cast<int32_t>(multiplier), shift, diff_min,
              static_cast<int32_t>(reverse_divisor), -reverse_shift};

  std::vector<int8_t> out(in.size());
  for (int i = 0; i < rows; ++i) {
    const int8_t* x = &in[size_t(i) * depth];
    int8_t max_in_row = -128;
    for (int c = 0; c < depth; ++c) max_in_row = std::max(max_in_row, x[c]);
    Fx<12> sum{0};
    for (int c = 0; c < depth; ++c) {
      const int32_t diff = x[c] - max_in_row;
      if (diff >= diff_min)
        sum = sum + rescale<12>(exp_on_negative_values(
                        Fx<5>{multiply_by_quantized_multiplier(diff, int32_t(multiplier), shift)}));
    }
    const int32_t log_sum = log_x(sum).raw;
    const int32_t adjusted_diff_min = std::max<int32_t>(
        diff_min - 1, multiply_by_quantized_multiplier(wrap(int64_t(log_sum) + INT32_MIN),
                                                       int32_t(reverse_divisor), reverse_shift));
    for (int c = 0; c < depth; ++c) {
      const int32_t diff = x[c] - max_in_row;
      int32_t v = -128;
      if (diff > adjusted_diff_min) {
        const int32_t in_q5 = multiply_by_quantized_multiplier(diff, int32_t(multiplier), shift);
        v = std::clamp<int32_t>(rounding_divide(wrap(int64_t(in_q5) - log_sum), 22) + 127, -128, 127);
      }
      out[size_t(i) * depth + c] = static_cast<int8_t>(v);
    }
  }
  return out;
}

// Returns the largest |output - float log_softmax| in LSB of 16/256 over unclamped outputs.
double check(int rows, int depth, double scale, uint32_t seed, int lo = -128, int hi = 127) {
  testing::RandomData rng(seed);
  const std::vector<int8_t> in = rng.int8s(size_t(rows) * depth, lo, hi);
  LogSoftmaxScaling want;
  const std::vector<int8_t> expected = tflite_log_softmax(in, rows, depth, scale, &want);
  LogSoftmaxParams p;
  p.rows = rows;
  p.row_size = depth;
  EXPECT_TRUE(log_softmax_scaling(scale, &p.scaling).ok());
  EXPECT_EQ(p.scaling.input_multiplier, want.input_multiplier);
  EXPECT_EQ(p.scaling.input_left_shift, want.input_left_shift);
  EXPECT_EQ(p.scaling.diff_min, want.diff_min);
  EXPECT_EQ(p.scaling.reverse_scaling_divisor, want.reverse_scaling_divisor);
  EXPECT_EQ(p.scaling.reverse_scaling_right_shift, want.reverse_scaling_right_shift);
  EXPECT_TRUE(quantized_log_softmax_prepare(p).ok());
  std::vector<int8_t> fast(in.size()), ref(in.size());
  quantized_log_softmax(p, in.data(), fast.data());
  quantized_log_softmax_reference(p, in.data(), ref.data());
  EXPECT_EQ(ref, expected) << "rows " << rows << " depth " << depth << " scale " << scale;
  EXPECT_EQ(fast, expected) << "rows " << rows << " depth " << depth << " scale " << scale;
  double worst = 0;
  for (int i = 0; i < rows; ++i) {
    double max = -1e9, sum = 0;
    for (int c = 0; c < depth; ++c) max = std::max(max, scale * in[size_t(i) * depth + c]);
    for (int c = 0; c < depth; ++c) sum += std::exp(scale * in[size_t(i) * depth + c] - max);
    for (int c = 0; c < depth; ++c) {
      const double real = scale * in[size_t(i) * depth + c] - max - std::log(sum);
      const double want_q = real * 16 + 127;
      if (want_q < -127.5) continue;  // clamped (or beyond the Q5.26 range: -128 by design)
      worst = std::max(worst, std::abs(want_q - expected[size_t(i) * depth + c]));
    }
  }
  return worst;
}

TEST(QuantizedLogSoftmax, MatchesTfliteReference) {
  EXPECT_LE(check(1, 12, 0.1, 1), 1.0);
  EXPECT_LE(check(7, 13, 0.0371, 2), 1.0);
  EXPECT_LE(check(3, 1, 0.05, 3), 1.0);
  EXPECT_LE(check(5, 255, 0.011, 4), 1.0);
  EXPECT_LE(check(2, 1000, 0.25, 5), 1.0);
  EXPECT_LE(check(2, 4096, 0.03, 6), 1.0);
}

TEST(QuantizedLogSoftmax, RandomizedAwkwardScalesAndShapes) {
  testing::RandomData rng(77);
  double worst = 0;
  for (int t = 0; t < 300; ++t) {
    const double scale = std::pow(10.0, rng.uniform(-650, 120) / 100.0);  // 3e-7 .. 16
    const int lo = rng.uniform(-128, 127);
    worst = std::max(worst, check(rng.uniform(1, 6), rng.uniform(1, 70), scale, 2000 + t, lo,
                                  rng.uniform(lo, 127)));
  }
  // Output step 1/16: the rounding half LSB plus the fixed-point log's error.
  EXPECT_LE(worst, 1.0);
  std::printf("largest |int8 - float log_softmax| over unclamped outputs: %.3f LSB\n", worst);
}

TEST(QuantizedLogSoftmax, FullRowOfEqualValuesSaturatesTheSum) {
  std::vector<int8_t> in(4096, -3), out(in.size()), ref(in.size());
  LogSoftmaxParams p;
  p.row_size = 4096;
  ASSERT_TRUE(log_softmax_scaling(0.05, &p.scaling).ok());
  ASSERT_TRUE(quantized_log_softmax_prepare(p).ok());
  quantized_log_softmax(p, in.data(), out.data());
  quantized_log_softmax_reference(p, in.data(), ref.data());
  EXPECT_EQ(out, ref);
  EXPECT_EQ(out[0], static_cast<int8_t>(std::lround(-std::log(4096.0) * 16 + 127)));
}

TEST(QuantizedLogSoftmax, PrepareRejectsBadParams) {
  LogSoftmaxParams p;
  ASSERT_TRUE(log_softmax_scaling(0.1, &p.scaling).ok());
  p.row_size = 5000;
  EXPECT_STREQ(quantized_log_softmax_prepare(p).argument, "row_size");
  p.row_size = 10;
  p.scaling.reverse_scaling_right_shift = 40;
  EXPECT_STREQ(quantized_log_softmax_prepare(p).argument, "reverse_scaling_right_shift");
  LogSoftmaxScaling s;
  EXPECT_STREQ(log_softmax_scaling(1e-9, &s).argument, "input_scale");
}

}  // namespace
}  // namespace cortexm
