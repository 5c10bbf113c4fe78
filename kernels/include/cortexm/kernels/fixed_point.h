// gemmlowp's fixed-point routines on raw int32 values, as CMSIS-NN (arm_nnsupportfunctions.h) and
// TFLite's reference softmax / log_softmax use them. A value in Qm.n (m integer bits, n = 31 - m) is
// stored as raw = value * 2^n. Additions wrap as the target's do.
#pragma once

#include <cstdint>

#include "cortexm/kernels/requantize.h"

namespace cortexm::fixed_point {

using cortexm::wrapping_add;
using cortexm::wrapping_sub;

// round(a * b / 2^31), halves away from zero; INT32_MIN * INT32_MIN saturates to INT32_MAX
// (gemmlowp SaturatingRoundingDoublingHighMul, CMSIS-NN arm_nn_doubling_high_mult).
inline int32_t saturating_rounding_doubling_high_mul(int32_t a, int32_t b) {
  if (a == b && a == INT32_MIN) return INT32_MAX;
  const int64_t ab = int64_t{a} * int64_t{b};
  const int64_t nudge = ab >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
  return static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));
}

// x / 2^exponent rounded, halves away from zero, for exponent in [0, 31]; for larger exponents the
// rounded quotient of any int32 is 0 (gemmlowp RoundingDivideByPOT, extended).
inline int32_t rounding_divide_by_pot(int32_t x, int32_t exponent) {
  if (exponent >= 32) return 0;
  return divide_by_power_of_two(x, exponent);
}

// x * 2^exponent for exponent in [0, 31), saturating (gemmlowp SaturatingRoundingMultiplyByPOT,
// CMSIS-NN arm_nn_mult_by_power_of_two).
inline int32_t saturating_left_shift(int32_t x, int32_t exponent) {
  if (exponent == 0) return x;
  const int32_t threshold = static_cast<int32_t>((uint32_t{1} << (31 - exponent)) - 1u);
  if (x > threshold) return INT32_MAX;
  if (x < -threshold) return INT32_MIN;
  return static_cast<int32_t>(static_cast<uint32_t>(x) << exponent);
}

// (a + b) / 2 rounded, halves away from zero (gemmlowp RoundingHalfSum).
inline int32_t rounding_half_sum(int32_t a, int32_t b) {
  const int64_t sum = int64_t{a} + int64_t{b};
  return static_cast<int32_t>((sum + (sum >= 0 ? 1 : -1)) / 2);
}

// exp(a) for a <= 0 given in Q5.26, result in Q0.31 (gemmlowp exp_on_negative_values with 5 integer
// bits): a Taylor polynomial on [-1/4, 0) around -1/8, then one factor exp(-2^k) per set bit of the
// remainder, k = -2 .. 4.
inline int32_t exp_on_negative_values(int32_t a) {
  constexpr int32_t kFractionalBits = 26;
  constexpr int32_t kQuarter = int32_t{1} << (kFractionalBits - 2);
  const int32_t a_mod_quarter_minus_quarter = wrapping_sub(a & (kQuarter - 1), kQuarter);
  const int32_t remainder = wrapping_sub(a_mod_quarter_minus_quarter, a);

  // Q5.26 in [-1/4, 0) -> Q0.31, plus 1/8: x is the offset from the expansion point -1/8.
  const int32_t x = wrapping_add(saturating_left_shift(a_mod_quarter_minus_quarter, 5), 1 << 28);
  constexpr int32_t kExpMinusOneEighth = 1895147668;
  constexpr int32_t kOneThird = 715827883;
  const int32_t x2 = saturating_rounding_doubling_high_mul(x, x);
  const int32_t x3 = saturating_rounding_doubling_high_mul(x2, x);
  const int32_t x4 = saturating_rounding_doubling_high_mul(x2, x2);
  const int32_t x4_over_4 = rounding_divide_by_pot(x4, 2);
  const int32_t poly = rounding_divide_by_pot(
      wrapping_add(
          saturating_rounding_doubling_high_mul(wrapping_add(x4_over_4, x3), kOneThird), x2),
      1);
  int32_t result = wrapping_add(
      kExpMinusOneEighth,
      saturating_rounding_doubling_high_mul(kExpMinusOneEighth, wrapping_add(x, poly)));

  // exp(-1/4), exp(-1/2), exp(-1), exp(-2), exp(-4), exp(-8), exp(-16) in Q0.31.
  constexpr int32_t kFactors[7] = {1672461947, 1302514674, 790015084, 290630308,
                                   39332535,   720401,     242};
  for (int32_t k = 0; k < 7; ++k)
    if (remainder & (int32_t{1} << (kFractionalBits - 2 + k)))
      result = saturating_rounding_doubling_high_mul(result, kFactors[k]);
  return a == 0 ? INT32_MAX : result;
}

// 1 / (1 + a) for a in [0, 1) in Q0.31, result in Q0.31: three Newton-Raphson steps on the half
// denominator, in Q2.29 (gemmlowp one_over_one_plus_x_for_x_in_0_1).
inline int32_t one_over_one_plus_x_for_x_in_0_1(int32_t a) {
  const int32_t half_denominator = rounding_half_sum(a, INT32_MAX);
  constexpr int32_t k48Over17 = 1515870810;      // Q2.29
  constexpr int32_t kNeg32Over17 = -1010580540;  // Q2.29
  constexpr int32_t kOne = int32_t{1} << 29;     // Q2.29
  int32_t x = wrapping_add(k48Over17,
                           saturating_rounding_doubling_high_mul(half_denominator, kNeg32Over17));
  for (int i = 0; i < 3; ++i) {
    const int32_t half_denominator_times_x =
        saturating_rounding_doubling_high_mul(half_denominator, x);
    const int32_t one_minus = wrapping_sub(kOne, half_denominator_times_x);
    x = wrapping_add(x, saturating_left_shift(saturating_rounding_doubling_high_mul(x, one_minus), 2));
  }
  return saturating_left_shift(x, 1);
}

// Number of leading zero bits of x (32 for 0).
inline int32_t count_leading_zeros(uint32_t x) {
  return x == 0 ? 32 : __builtin_clz(x);
}

// Softmax's input difference diff (<= 0) scaled to Q5.26: (diff << left_shift) times multiplier.
inline int32_t scaled_diff(int32_t diff, int32_t multiplier, int32_t left_shift) {
  return saturating_rounding_doubling_high_mul(
      static_cast<int32_t>(int64_t{diff} * (int64_t{1} << left_shift)), multiplier);
}

// The largest of n >= 1 int8 values.
inline int32_t row_max(const int8_t* row, int32_t n) {
  int32_t max = row[0];
  for (int32_t c = 1; c < n; ++c) max = row[c] > max ? row[c] : max;
  return max;
}

}  // namespace cortexm::fixed_point
