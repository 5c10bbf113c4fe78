// cortex_m.quantized_add (arm_elementwise_add_s8): both inputs are offset, shifted left by 20,
// requantized to a common scale, summed, requantized to the output, offset and clamped.
#pragma once

#include <cstdint>

#include "cortexm/kernels/rescaled_binary.h"

namespace cortexm {

constexpr int32_t kAddLeftShift = 20;

struct AddParams : RescaledBinaryParams {};

Error quantized_add_prepare(const AddParams& params);

// The variant this build selects (kKernelIsa, cortexm/kernels/kernel_isa.h): scalar, DSP or MVE.
void quantized_add(const AddParams& params, const int8_t* lhs, const int8_t* rhs, int8_t* output);

void quantized_add_reference(const AddParams& params, const int8_t* lhs, const int8_t* rhs,
                             int8_t* output);

}  // namespace cortexm
