// Parameters shared by the int8 binary ops that rescale both inputs to a common scale before
// combining them (quantized_add, quantized_maximum, quantized_minimum): each input is offset,
// shifted left by 20 and requantized to the common scale; the result is requantized once to the
// output, offset and clamped.
#pragma once

#include <cstdint>

#include "cortexm/kernels/broadcast.h"
#include "cortexm/kernels/requantize.h"

namespace cortexm {

struct RescaledBinaryParams {
  BroadcastShape shape;
  int32_t lhs_offset = 0;  // -self zero point
  int32_t lhs_multiplier = 0;
  int32_t lhs_shift = 0;
  int32_t rhs_offset = 0;  // -other zero point
  int32_t rhs_multiplier = 0;
  int32_t rhs_shift = 0;
  int32_t output_offset = 0;  // +output zero point
  int32_t output_multiplier = 0;
  int32_t output_shift = 0;
  int32_t activation_min = -128;
  int32_t activation_max = 127;
};

// The multipliers and shifts that take each input to the common scale and the result to the
// output's (quantized_add, quantized_maximum / minimum, quantized_add_s16).
template <typename Params>
Error check_rescale_multipliers(const Params& p) {
  CORTEXM_RETURN_IF_ERROR(
      check_multiplier("self_multiplier", p.lhs_multiplier, "self_shift", p.lhs_shift));
  CORTEXM_RETURN_IF_ERROR(
      check_multiplier("other_multiplier", p.rhs_multiplier, "other_shift", p.rhs_shift));
  return check_multiplier("output_multiplier", p.output_multiplier, "output_shift", p.output_shift);
}

// Zero points within int8, the three multipliers and shifts as quantize_multiplier makes them, the
// activation range within int8: the prepare step of every op that uses these parameters.
Error check_rescaled_binary(const RescaledBinaryParams& params);

}  // namespace cortexm
