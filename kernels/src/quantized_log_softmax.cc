#include "cortexm/kernels/quantized_log_softmax.h"

#include <cmath>

#include "cortexm/kernels/fixed_point.h"
#include "lazy_exp_table.h"

namespace cortexm {

namespace fixed_point {

namespace {

int32_t saturating_add(int32_t a, int32_t b) {
  const int64_t s = int64_t{a} + b;
  return static_cast<int32_t>(s > INT32_MAX ? INT32_MAX : (s < INT32_MIN ? INT32_MIN : s));
}

int32_t saturating_sub(int32_t a, int32_t b) {
  const int64_t s = int64_t{a} - b;
  return static_cast<int32_t>(s > INT32_MAX ? INT32_MAX : (s < INT32_MIN ? INT32_MIN : s));
}

}  // namespace

// TFLite's log_x_for_x_greater_than_or_equal_to_1_impl<5, 12>: x = 2^k * r with r in
// [sqrt(1/2), sqrt(2)) found from the headroom of x and of x * sqrt(1/2) (k carries +-1/4 so that
// the reduced argument is centred on 2^(-1/4)); log r from a rational approximation in
// q = 2 * (r - 2^(-1/4)); accumulated in Q6.25 and rescaled to Q5.26.
int32_t log_q12_to_q5(int32_t x) {
  constexpr int32_t kInputIntegerBits = 12;
  constexpr int32_t kAccumIntegerBits = 6;
  constexpr int32_t kLog2 = 1488522236;
  constexpr int32_t kSqrtSqrtHalf = 1805811301;
  constexpr int32_t kSqrtHalf = 1518500250;
  constexpr int32_t kOneQuarter = 536870912;
  constexpr int32_t kAlphaN = 117049297;
  constexpr int32_t kAlphaD = 127690142;
  constexpr int32_t kAlphaI = 1057819769;
  constexpr int32_t kAlphaF = 638450708;
  const int32_t shifted_quarter = rounding_divide_by_pot(kOneQuarter, kAccumIntegerBits);

  const int32_t z_a_headroom_plus_1 = count_leading_zeros(static_cast<uint32_t>(x));
  const int32_t r_a_tmp = saturating_left_shift(x, z_a_headroom_plus_1 - 1);
  const int32_t r_a = saturating_left_shift(saturating_rounding_doubling_high_mul(r_a_tmp, kSqrtHalf), 1);
  const int32_t z_a_pow_2_adj = saturating_add(
      saturating_left_shift(kInputIntegerBits - z_a_headroom_plus_1, 31 - kAccumIntegerBits),
      shifted_quarter);

  const int32_t z_b = saturating_rounding_doubling_high_mul(x, kSqrtHalf);
  const int32_t z_b_headroom = count_leading_zeros(static_cast<uint32_t>(z_b)) - 1;
  const int32_t r_b = saturating_left_shift(x, z_b_headroom);
  const int32_t z_b_pow_2_adj = saturating_sub(
      saturating_left_shift(kInputIntegerBits - z_b_headroom, 31 - kAccumIntegerBits),
      shifted_quarter);

  const int32_t r = r_a < r_b ? r_a : r_b;
  const int32_t z_pow_2_adj = z_a_pow_2_adj > z_b_pow_2_adj ? z_a_pow_2_adj : z_b_pow_2_adj;

  const int32_t p = rounding_half_sum(r, kSqrtSqrtHalf);
  int32_t q = wrapping_sub(r, kSqrtSqrtHalf);
  q = wrapping_add(q, q);
  const int32_t common_sq = saturating_rounding_doubling_high_mul(q, q);
  const int32_t num = wrapping_add(
      saturating_rounding_doubling_high_mul(q, r),
      saturating_rounding_doubling_high_mul(saturating_rounding_doubling_high_mul(q, common_sq),
                                            kAlphaN));
  const int32_t denom_minus_one = wrapping_add(
      saturating_rounding_doubling_high_mul(
          p, wrapping_add(wrapping_add(kAlphaI, q),
                          saturating_rounding_doubling_high_mul(kAlphaD, common_sq))),
      saturating_rounding_doubling_high_mul(kAlphaF, q));
  const int32_t recip_denom = one_over_one_plus_x_for_x_in_0_1(denom_minus_one);
  const int32_t num_scaled = rounding_divide_by_pot(num, kAccumIntegerBits);
  return saturating_left_shift(
      wrapping_add(saturating_rounding_doubling_high_mul(z_pow_2_adj, kLog2),
                   saturating_rounding_doubling_high_mul(num_scaled, recip_denom)),
      1);
}

}  // namespace fixed_point

namespace {

using namespace fixed_point;

constexpr int32_t kAccumulationIntegerBits = 12;
constexpr int32_t kOutputShift = 31 - 5 - 4;  // Q5.26 -> units of 16/256

inline int32_t scaled_diff(const LogSoftmaxScaling& s, int32_t diff) {
  return fixed_point::scaled_diff(diff, s.input_multiplier, s.input_left_shift);
}

}  // namespace

Error log_softmax_scaling(double input_scale, LogSoftmaxScaling* out) {
  SoftmaxScaling s;
  CORTEXM_RETURN_IF_ERROR(softmax_scaling(input_scale, &s));
  out->input_multiplier = s.input_multiplier;
  out->input_left_shift = s.input_left_shift;
  out->diff_min = s.diff_min;
  const double reverse = double(int64_t{1} << (31 - s.input_left_shift)) / s.input_multiplier;
  int exponent = 0;
  const double fraction = std::frexp(reverse, &exponent);
  int64_t q = static_cast<int64_t>(std::round(fraction * double(int64_t{1} << 31)));
  if (q == (int64_t{1} << 31)) {
    q /= 2;
    ++exponent;
  }
  if (exponent > 0)
    return invalid("input_scale", exponent, "gives a reverse scaling >= 1 (scale too close to 2^-26)");
  if (exponent < -31) {  // TFLite's QuantizeMultiplier: a multiplier that rounds everything to 0
    q = 0;
    exponent = 0;
  }
  out->reverse_scaling_divisor = static_cast<int32_t>(q);
  out->reverse_scaling_right_shift = -exponent;
  return kOk;
}

CORTEXM_PREPARE_STEP Error quantized_log_softmax_prepare(const LogSoftmaxParams& p) {
  SoftmaxParams sp;
  sp.rows = p.rows;
  sp.row_size = p.row_size;
  sp.scaling.input_multiplier = p.scaling.input_multiplier;
  sp.scaling.input_left_shift = p.scaling.input_left_shift;
  sp.scaling.diff_min = p.scaling.diff_min;
  CORTEXM_RETURN_IF_ERROR(quantized_softmax_prepare(sp));
  if (p.scaling.reverse_scaling_divisor < 0)
    return invalid("reverse_scaling_divisor", p.scaling.reverse_scaling_divisor, "must be >= 0");
  if (p.scaling.reverse_scaling_right_shift < 0 || p.scaling.reverse_scaling_right_shift > 31)
    return invalid("reverse_scaling_right_shift", p.scaling.reverse_scaling_right_shift,
                   "must be in [0, 31]");
  return kOk;
}

// exp from a LazyExpTable.
void quantized_log_softmax(const LogSoftmaxParams& p, const int8_t* input, int8_t* output) {
  const LogSoftmaxScaling& s = p.scaling;
  LazyExpTable exp_table;
  auto exp_of = [&](int32_t k) {  // k = -diff
    return exp_table.get(k, [&s](int32_t key) {
      return rounding_divide_by_pot(exp_on_negative_values(scaled_diff(s, -key)),
                                    kAccumulationIntegerBits);
    });
  };
  for (int32_t r = 0; r < p.rows; ++r) {
    const int8_t* in = input + int64_t{r} * p.row_size;
    int8_t* out = output + int64_t{r} * p.row_size;
    const int32_t max = row_max(in, p.row_size);
    uint32_t sum = 0;  // Q12.19
    for (int32_t c = 0; c < p.row_size; ++c)
      if (in[c] - max >= s.diff_min) sum += static_cast<uint32_t>(exp_of(max - in[c]));
    const int32_t log_sum = log_q12_to_q5(sum > INT32_MAX ? INT32_MAX : static_cast<int32_t>(sum));
    // The smallest diff whose scaled value minus log_sum stays above INT32_MIN.
    const int32_t reverse = rounding_divide_by_pot(
        saturating_rounding_doubling_high_mul(wrapping_add(log_sum, INT32_MIN),
                                              s.reverse_scaling_divisor),
        s.reverse_scaling_right_shift);
    const int32_t diff_min_below = wrapping_sub(s.diff_min, 1);  // wraps as the target's subtract does
    const int32_t adjusted_diff_min = diff_min_below > reverse ? diff_min_below : reverse;
    for (int32_t c = 0; c < p.row_size; ++c) {
      const int32_t diff = in[c] - max;
      int32_t v = -128;
      if (diff > adjusted_diff_min) {
        v = rounding_divide_by_pot(wrapping_sub(scaled_diff(s, diff), log_sum), kOutputShift) + 127;
        v = v < -128 ? -128 : (v > 127 ? 127 : v);
      }
      out[c] = static_cast<int8_t>(v);
    }
  }
}

}  // namespace cortexm
