// One element of quantized_add and quantized_mul, shared by the scalar kernels and the DSP / MVE
// variants (for their broadcast runs and tails).
#pragma once

#include "cortexm/kernels/quantized_add.h"
#include "cortexm/kernels/quantized_mul.h"
#include "cortexm/kernels/requantize.h"

namespace cortexm {

// a_offset = lhs + lhs_offset, b_offset = rhs + rhs_offset.
inline int8_t add_offset_inputs(const AddParams& p, int32_t a_offset, int32_t b_offset) {
  const int32_t a_scaled =
      requantize(a_offset * (1 << kAddLeftShift), p.lhs_multiplier, p.lhs_shift);
  const int32_t b_scaled =
      requantize(b_offset * (1 << kAddLeftShift), p.rhs_multiplier, p.rhs_shift);
  const int32_t sum =
      requantize(a_scaled + b_scaled, p.output_multiplier, p.output_shift) + p.output_offset;
  return static_cast<int8_t>(clamp(sum, p.activation_min, p.activation_max));
}

inline int8_t add_one(const AddParams& p, int32_t a, int32_t b) {
  return add_offset_inputs(p, a + p.lhs_offset, b + p.rhs_offset);
}

inline int8_t mul_one(const MulParams& p, int32_t lhs_shifted, int32_t rhs_shifted) {
  const int32_t product = lhs_shifted * rhs_shifted;  // |product| <= 255 * 255
  const int32_t out =
      requantize(product, p.output_multiplier, p.output_shift) + p.output_offset;
  return static_cast<int8_t>(clamp(out, p.activation_min, p.activation_max));
}

}  // namespace cortexm
