// cortex_m.quantized_add (arm_elementwise_add_s8): both inputs are offset, shifted left by 20,
// requantized to a common scale, summed, requantized to the output, offset and clamped.
#pragma once

#include <cstdint>

#include "cortexm/kernels/broadcast.h"

namespace cortexm {

constexpr int32_t kAddLeftShift = 20;

struct AddParams {
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

Error quantized_add_prepare(const AddParams& params);

// The variant this build selects (kKernelIsa, cortexm/kernels/kernel_isa.h): scalar, DSP or MVE.
void quantized_add(const AddParams& params, const int8_t* lhs, const int8_t* rhs, int8_t* output);

void quantized_add_reference(const AddParams& params, const int8_t* lhs, const int8_t* rhs,
                             int8_t* output);

}  // namespace cortexm
