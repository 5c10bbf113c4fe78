// cortex_m.quantized_mul (arm_elementwise_mul_s8): (lhs + lhs_offset) * (rhs + rhs_offset),
// requantized, offset and clamped.
#pragma once

#include <cstdint>

#include "cortexm/kernels/broadcast.h"

namespace cortexm {

struct MulParams {
  BroadcastShape shape;
  int32_t lhs_offset = 0;  // -self zero point
  int32_t rhs_offset = 0;  // -other zero point
  int32_t output_offset = 0;
  int32_t output_multiplier = 0;
  int32_t output_shift = 0;
  int32_t activation_min = -128;
  int32_t activation_max = 127;
};

Error quantized_mul_prepare(const MulParams& params);

// The variant this build selects (kKernelIsa, cortexm/kernels/kernel_isa.h): scalar, DSP or MVE.
void quantized_mul(const MulParams& params, const int8_t* lhs, const int8_t* rhs, int8_t* output);

void quantized_mul_reference(const MulParams& params, const int8_t* lhs, const int8_t* rhs,
                             int8_t* output);

}  // namespace cortexm
