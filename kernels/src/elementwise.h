// One element of quantized_add and quantized_mul (and their int16 forms), shared by the scalar
// kernels and the DSP / MVE variants (for their broadcast runs and tails).
#pragma once

#include "cortexm/kernels/quantized_add.h"
#include "cortexm/kernels/quantized_add_s16.h"
#include "cortexm/kernels/quantized_mul.h"
#include "cortexm/kernels/quantized_mul_s16.h"
#include "cortexm/kernels/requantize.h"

namespace cortexm {

// for_each_broadcast_run with the run's pointers: run(a, b, out, count, ls, rs) reads a[i * ls] and
// b[i * rs] and writes out[0, count); runs follow each other in the output.
template <typename T, typename Run>
void for_each_elementwise_run(const BroadcastShape& shape, const T* lhs, const T* rhs, T* output,
                              Run run) {
  for_each_broadcast_run(shape, [&](int64_t li, int64_t ri, int32_t count, int32_t ls, int32_t rs) {
    run(lhs + li, rhs + ri, output, count, ls, rs);
    output += count;
  });
}

// One run element by element: out[i] = one(a[i * ls], b[i * rs]).
template <typename T, typename One>
inline void strided_run(const T* a, const T* b, T* out, int32_t count, int32_t ls, int32_t rs,
                        One one) {
  for (int32_t i = 0; i < count; ++i) out[i] = one(a[int64_t{i} * ls], b[int64_t{i} * rs]);
}

// a_offset = lhs + lhs_offset, b_offset = rhs + rhs_offset.
inline int8_t add_offset_inputs(const AddParams& p, int32_t a_offset, int32_t b_offset) {
  const int32_t a_scaled =
      requantize(a_offset * (1 << kAddLeftShift), p.lhs_multiplier, p.lhs_shift);
  const int32_t b_scaled =
      requantize(b_offset * (1 << kAddLeftShift), p.rhs_multiplier, p.rhs_shift);
  // Shifts above 0 may bring both near the int32 limits: the sum wraps, as the Cortex-M add does.
  const int32_t sum = wrapping_add(
      requantize(wrapping_add(a_scaled, b_scaled), p.output_multiplier, p.output_shift), p.output_offset);
  return static_cast<int8_t>(clamp(sum, p.activation_min, p.activation_max));
}

inline int8_t add_one(const AddParams& p, int32_t a, int32_t b) {
  return add_offset_inputs(p, a + p.lhs_offset, b + p.rhs_offset);
}

inline int8_t mul_one(const MulParams& p, int32_t lhs_shifted, int32_t rhs_shifted) {
  const int32_t product = lhs_shifted * rhs_shifted;  // |product| <= 255 * 255
  const int32_t out =
      wrapping_add(requantize(product, p.output_multiplier, p.output_shift), p.output_offset);
  return static_cast<int8_t>(clamp(out, p.activation_min, p.activation_max));
}

// int16 add: one input shifted left by 15 and rescaled to the common scale.
inline int32_t add_s16_scaled(int32_t x, int32_t multiplier, int32_t shift) {
  return requantize(x * (1 << kAddS16LeftShift), multiplier, shift);
}

// int16 add of two rescaled inputs; the sum wraps as on the target.
inline int16_t add_s16_sum(const AddS16Params& p, int32_t a_scaled, int32_t b_scaled) {
  const int32_t sum = static_cast<int32_t>(static_cast<uint32_t>(a_scaled) + static_cast<uint32_t>(b_scaled));
  return static_cast<int16_t>(
      clamp(requantize(sum, p.output_multiplier, p.output_shift), p.activation_min, p.activation_max));
}

inline int16_t add_s16_one(const AddS16Params& p, int32_t a, int32_t b) {
  return add_s16_sum(p, add_s16_scaled(a, p.lhs_multiplier, p.lhs_shift),
                     add_s16_scaled(b, p.rhs_multiplier, p.rhs_shift));
}

inline int16_t mul_s16_one(const MulS16Params& p, int32_t a, int32_t b) {
  return static_cast<int16_t>(clamp(requantize(a * b, p.output_multiplier, p.output_shift),  // |a * b| <= 2^30
                                    p.activation_min, p.activation_max));
}

}  // namespace cortexm
