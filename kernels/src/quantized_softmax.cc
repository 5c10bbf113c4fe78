#include "cortexm/kernels/quantized_softmax.h"

#include <cmath>

#include "cortexm/kernels/fixed_point.h"
#include "lazy_exp_table.h"

namespace cortexm {

namespace {

using namespace fixed_point;

constexpr int32_t kScaledDiffIntegerBits = 5;
constexpr int32_t kAccumulationIntegerBits = 12;

// exp(diff * scale) in Q0.31 for one int8 difference (diff <= 0, >= diff_min).
// Not inlined: the table computes each exp once per call, and both passes over a row ask for it
// (inlined twice it is 1.3 KB more flash).
__attribute__((noinline)) int32_t exp_of_diff(const SoftmaxScaling& s, int32_t diff) {
  return exp_on_negative_values(scaled_diff(diff, s.input_multiplier, s.input_left_shift));
}

uint64_t float64_bits(double v) {
  uint64_t bits = 0;
  __builtin_memcpy(&bits, &v, sizeof(bits));
  return bits;
}

}  // namespace

Error softmax_scaling(double input_scale, SoftmaxScaling* out) {
  constexpr double kFractionScale = double(int64_t{1} << (31 - kScaledDiffIntegerBits));
  if (!(input_scale * kFractionScale > 1.0) || !std::isfinite(input_scale))
    return invalid("input_scale", static_cast<int64_t>(float64_bits(input_scale)),
                   "(float64 bits) must be finite and > 2^-26");
  // Large multipliers are capped: every diff but 0 then gives exp = 0, as the real one rounds to.
  const double real = std::fmin(input_scale * kFractionScale, double(INT32_MAX));
  int exponent = 0;
  const double fraction = std::frexp(real, &exponent);
  int64_t q = static_cast<int64_t>(std::round(fraction * double(int64_t{1} << 31)));
  if (q == (int64_t{1} << 31)) {
    q /= 2;
    ++exponent;
  }
  out->input_multiplier = static_cast<int32_t>(q);
  out->input_left_shift = exponent;
  // The largest |diff| whose scaled value stays within Q5.26 (TFLite's CalculateInputRadius).
  const double radius = double((1 << kScaledDiffIntegerBits) - 1) * kFractionScale /
                        double(int64_t{1} << exponent);
  out->diff_min = -static_cast<int32_t>(std::floor(radius));
  return kOk;
}

CORTEXM_PREPARE_STEP Error quantized_softmax_prepare(const SoftmaxParams& p) {
  if (p.rows < 1) return invalid("rows", p.rows, "must be >= 1");
  if (p.row_size < 1 || p.row_size > kSoftmaxMaxRowSize)
    return invalid("row_size", p.row_size, "must be in [1, 4096]");
  const SoftmaxScaling& s = p.scaling;
  if (s.input_multiplier < 0) return invalid("input_multiplier", s.input_multiplier, "must be >= 0");
  if (s.input_left_shift < 0 || s.input_left_shift > 31)
    return invalid("input_shift", s.input_left_shift, "must be in [0, 31]");
  if (s.diff_min > 0) return invalid("diff_min", s.diff_min, "must be <= 0");
  const int64_t largest =
      int64_t{s.diff_min < -255 ? -255 : s.diff_min} * (int64_t{1} << s.input_left_shift);
  if (largest < INT32_MIN)
    return invalid("diff_min", s.diff_min, "shifted left by input_shift must fit int32");
  return kOk;
}

// exp from a LazyExpTable.
void quantized_softmax(const SoftmaxParams& p, const int8_t* input, int8_t* output) {
  LazyExpTable exp_table;
  const int32_t diff_min = p.scaling.diff_min;
  auto exp_of = [&](int32_t diff) {
    return exp_table.get(-diff, [&p](int32_t k) { return exp_of_diff(p.scaling, -k); });
  };
  for (int32_t r = 0; r < p.rows; ++r) {
    const int8_t* in = input + int64_t{r} * p.row_size;
    int8_t* out = output + int64_t{r} * p.row_size;
    const int32_t max = row_max(in, p.row_size);
    uint32_t sum = 0;  // Q12.19; 4096 exps of 1.0 reach 2^31, which uint32 holds
    for (int32_t c = 0; c < p.row_size; ++c) {
      const int32_t diff = in[c] - max;
      if (diff >= diff_min)
        sum += static_cast<uint32_t>(rounding_divide_by_pot(exp_of(diff), kAccumulationIntegerBits));
    }
    const int32_t headroom = count_leading_zeros(sum);
    const int32_t reciprocal = one_over_one_plus_x_for_x_in_0_1(
        static_cast<int32_t>((sum << headroom) - (uint32_t{1} << 31)));
    const int32_t bits_over_unit = kAccumulationIntegerBits - headroom + 23;
    for (int32_t c = 0; c < p.row_size; ++c) {
      const int32_t diff = in[c] - max;
      int32_t v = -128;
      if (diff >= diff_min) {
        v = rounding_divide_by_pot(saturating_rounding_doubling_high_mul(reciprocal, exp_of(diff)),
                                   bits_over_unit) -
            128;
        v = v > 127 ? 127 : v;
      }
      out[c] = static_cast<int8_t>(v);
    }
  }
}

}  // namespace cortexm
