// Fixed-point requantization exactly as CMSIS-NN's arm_nn_requantize (TFLite-compatible).
//
// Default (double rounding): left shift by max(shift, 0), doubling high multiply without saturation
// ((a * b + 2^30) >> 31 in 64 bits), then a rounding divide by 2^max(-shift, 0), halves away from zero.
// With CORTEXM_SINGLE_ROUNDING: one rounding of (acc * multiplier) >> (31 - shift), halves up.
#pragma once

#include <cstdint>

#include "cortexm/kernels/status.h"

namespace cortexm {

constexpr int32_t kMinShift = -31;
constexpr int32_t kMaxShift = 30;

// A multiplier in [0, 2^31) and a shift in [kMinShift, kMaxShift], as quantize_multiplier makes them.
inline Error check_multiplier(const char* multiplier_name, int32_t multiplier,
                              const char* shift_name, int32_t shift) {
  if (multiplier < 0) return invalid(multiplier_name, multiplier, "must be in [0, 2^31)");
  if (shift < kMinShift || shift > kMaxShift) return invalid(shift_name, shift, "must be in [-31, 30]");
  return kOk;
}

// (a * b + 2^30) >> 31 in 64-bit arithmetic; no saturation (CMSIS-NN arm_nn_doubling_high_mult_no_sat).
inline int32_t doubling_high_mult_no_sat(int32_t a, int32_t b) {
  const int64_t product = int64_t{a} * int64_t{b} + (int64_t{1} << 30);
  return static_cast<int32_t>(product >> 31);
}

// dividend / 2^exponent rounded to nearest, halves away from zero (arm_nn_divide_by_power_of_two).
inline int32_t divide_by_power_of_two(int32_t dividend, int32_t exponent) {
  const int32_t remainder_mask = static_cast<int32_t>((uint32_t{1} << exponent) - 1u);
  const int32_t remainder = dividend & remainder_mask;
  int32_t result = dividend >> exponent;
  int32_t threshold = remainder_mask >> 1;
  if (result < 0) ++threshold;
  if (remainder > threshold) ++result;
  return result;
}

// acc * multiplier * 2^(shift - 31), rounded as CMSIS-NN does. multiplier in [0, 2^31),
// shift in [kMinShift, kMaxShift]. A left shift that overflows wraps, as on the target.
inline int32_t requantize(int32_t acc, int32_t multiplier, int32_t shift) {
#if defined(CORTEXM_SINGLE_ROUNDING) && CORTEXM_SINGLE_ROUNDING
  const int32_t total_shift = 31 - shift;
  const int64_t product = int64_t{acc} * int64_t{multiplier};
  const int32_t result = static_cast<int32_t>(product >> (total_shift - 1));
  return (result + 1) >> 1;
#else
  const int32_t left = shift > 0 ? shift : 0;
  const int32_t right = shift > 0 ? 0 : -shift;
  const int32_t shifted = static_cast<int32_t>(static_cast<uint32_t>(acc) << left);
  return divide_by_power_of_two(doubling_high_mult_no_sat(shifted, multiplier), right);
#endif
}

// `count` multipliers in [0, 2^31) and shifts in [kMinShift, max_shift] (kMaxShift, or
// kMaxShiftS64 for the 64-bit requantize), one per channel or one per tensor; `missing` is the
// rule named when either array is absent.
inline Error check_multipliers(const int32_t* multipliers, const int32_t* shifts, int32_t count,
                               const char* missing, int32_t max_shift = kMaxShift) {
  if (multipliers == nullptr || shifts == nullptr)
    return invalid("requantize_multipliers", 0, missing);
  const char* shift_range = max_shift == kMaxShift ? "must be in [-31, 30]" : "must be in [-31, 7]";
  for (int32_t i = 0; i < count; ++i) {
    if (multipliers[i] < 0)
      return invalid("requantize_multipliers", multipliers[i], "must be in [0, 2^31)", i);
    if (shifts[i] < kMinShift || shifts[i] > max_shift)
      return invalid("requantize_shifts", shifts[i], shift_range, i);
  }
  return kOk;
}

// The 16-bit multiplier of CMSIS-NN's 64-bit requantize (REDUCE_MULTIPLIER): multiplier / 2^16
// rounded half up, saturated to 2^15 - 1. multiplier in [0, 2^31).
inline int32_t reduce_multiplier(int32_t multiplier) {
  return multiplier < 0x7FFF0000 ? (multiplier + (1 << 15)) >> 16 : 0x7FFF;
}

constexpr int32_t kMaxShiftS64 = 7;

// acc * reduced_multiplier * 2^(shift - 15), rounded half up, as CMSIS-NN's arm_nn_requantize_s64
// (the 16x8 kernels): (acc * reduced_multiplier) >> (14 - shift) in 64 bits, truncated to 32 bits,
// then (+1) >> 1. shift in [kMinShift, kMaxShiftS64]; acc within +-2^47 keeps the product exact
// (outside it the product and the truncation wrap, as on the target).
inline int32_t requantize_s64(int64_t acc, int32_t reduced_multiplier, int32_t shift) {
  const int64_t product =
      static_cast<int64_t>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(int64_t{reduced_multiplier}));
  const int32_t result = static_cast<int32_t>(product >> (14 - shift));
  return static_cast<int32_t>(static_cast<uint32_t>(result) + 1u) >> 1;
}

// The 16x16 kernels (int16 activations and weights): each product |x * w| <= 2^30, so a sum of at
// most kMaxTapsS16W16 of them stays within +-2^46 and, with a bias within +-kMaxBiasS16W16, the
// accumulator within +-2^47, where requantize_s64's product with the reduced (<= 2^15) multiplier
// is exact in int64 (< 2^62). Their prepare steps refuse longer dot products; the lowering refuses
// larger biases.
constexpr int32_t kMaxTapsS16W16 = 1 << 16;
constexpr int64_t kMaxBiasS16W16 = int64_t{1} << 46;

// a + b modulo 2^32, as the target's 32-bit add (no signed-overflow UB).
inline int32_t wrapping_add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}

// a - b modulo 2^32.
inline int32_t wrapping_sub(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
}

inline int32_t clamp(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

struct QuantizedMultiplier {
  int32_t multiplier = 0;
  int32_t shift = 0;
};

// real_scale -> (multiplier, shift) with real_scale ~= multiplier * 2^(shift - 31), TFLite's
// QuantizeMultiplier: frexp, round half away from zero, the 2^31 fix-up; a shift below -31 gives
// (0, 0) and a shift above 30 saturates to (2^31 - 1, 30). real_scale must be finite and >= 0.
QuantizedMultiplier quantize_multiplier(double real_scale);

}  // namespace cortexm
