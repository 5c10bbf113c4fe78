// Parameters shared by the int8 binary ops that rescale both inputs to a common scale before
// combining them (quantized_add, quantized_maximum, quantized_minimum): each input is offset,
// shifted left by 20 and requantized to the common scale; the result is requantized once to the
// output, offset and clamped.
#pragma once

#include <cstdint>

#include "cortexm/kernels/broadcast.h"

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

// Zero points within int8, the three multipliers and shifts as quantize_multiplier makes them, the
// activation range within int8: the prepare step of every op that uses these parameters.
Error check_rescaled_binary(const RescaledBinaryParams& params);

}  // namespace cortexm
