// Vector requantization for the MVE (Helium) kernel variants, bit-identical with requantize()
// (requantize.h) lane by lane.
//
// Double rounding: VSHL (wrapping left shift by max(shift, 0)); VQRDMULH, which is
// (a * m + 2^30) >> 31 and cannot saturate because m >= 0; then the rounding divide by
// 2^max(-shift, 0) with halves away from zero: VRSHL rounds halves up, so negative dividends are
// first lowered by one (a saturating add, as CMSIS-NN's arm_divide_by_power_of_two_mve does):
// for x = q * 2^e + r, (x - 1 + 2^(e-1)) >> e = q + (r > 2^(e-1)), the reference's rule for x < 0.
// CORTEXM_SINGLE_ROUNDING requantizes lane by lane with the scalar function.
#pragma once

#include <arm_mve.h>

#include <cstdint>

#include "cortexm/kernels/requantize.h"

namespace cortexm::mve {

// One multiplier and shift for all lanes, split once for a loop (requantize(acc, Requantizer)).
struct Requantizer {
  int32_t multiplier, shift, left, neg_right;
};

inline Requantizer make_requantizer(int32_t multiplier, int32_t shift) {
  return {multiplier, shift, shift > 0 ? shift : 0, shift > 0 ? 0 : shift};
}

inline int32x4_t requantize(int32x4_t acc, Requantizer r) {
#if defined(CORTEXM_SINGLE_ROUNDING) && CORTEXM_SINGLE_ROUNDING
  int32_t lanes[4];
  vst1q_s32(lanes, acc);
  for (int32_t& lane : lanes) lane = cortexm::requantize(lane, r.multiplier, r.shift);
  return vld1q_s32(lanes);
#else
  const int32x4_t high = vqrdmulhq_n_s32(vshlq_r_s32(acc, r.left), r.multiplier);
  const int32x4_t fixup = vshrq_n_s32(vandq_s32(high, vdupq_n_s32(r.neg_right)), 31);
  return vrshlq_n_s32(vqaddq_s32(high, fixup), r.neg_right);
#endif
}

inline int32x4_t requantize(int32x4_t acc, int32_t multiplier, int32_t shift) {
  return requantize(acc, make_requantizer(multiplier, shift));
}

// Per-lane multipliers and shifts (per-channel requantization).
inline int32x4_t requantize(int32x4_t acc, int32x4_t multipliers, int32x4_t shifts) {
#if defined(CORTEXM_SINGLE_ROUNDING) && CORTEXM_SINGLE_ROUNDING
  int32_t lanes[4], m[4], s[4];
  vst1q_s32(lanes, acc);
  vst1q_s32(m, multipliers);
  vst1q_s32(s, shifts);
  for (int i = 0; i < 4; ++i) lanes[i] = cortexm::requantize(lanes[i], m[i], s[i]);
  return vld1q_s32(lanes);
#else
  const int32x4_t zero = vdupq_n_s32(0);
  const int32x4_t neg_right = vminq_s32(shifts, zero);
  const int32x4_t high = vqrdmulhq_s32(vshlq_s32(acc, vmaxq_s32(shifts, zero)), multipliers);
  const int32x4_t fixup = vshrq_n_s32(vandq_s32(high, neg_right), 31);
  return vrshlq_s32(vqaddq_s32(high, fixup), neg_right);
#endif
}

// + output_offset (wrapping, as the scalar path), clamped to [lo, hi].
inline int32x4_t offset_and_clamp(int32x4_t v, int32_t output_offset, int32_t lo, int32_t hi) {
  v = vaddq_n_s32(v, output_offset);
  return vminq_s32(vmaxq_s32(v, vdupq_n_s32(lo)), vdupq_n_s32(hi));
}

}  // namespace cortexm::mve
