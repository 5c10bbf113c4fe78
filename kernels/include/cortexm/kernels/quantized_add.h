// cortex_m.quantized_add (arm_elementwise_add_s8): both inputs are offset, shifted left by 20,
// requantized to a common scale, summed, requantized to the output, offset and clamped.
// cortex_m.quantized_sub (TFLite Micro's SUB; CMSIS-NN has none): the same, the second input's
// scaled value subtracted instead of added.
#pragma once

#include <cstdint>

#include "cortexm/kernels/host_variant.h"
#include "cortexm/kernels/rescaled_binary.h"

namespace cortexm {

constexpr int32_t kAddLeftShift = 20;

struct AddParams : RescaledBinaryParams {
  // The host only: the x86 variant the kernel runs (one for the whole call), or kHostVariantInUse.
  HostVariant host_variant = kHostVariantInUse;
};

Error quantized_add_prepare(const AddParams& params);

// The variant this build selects (kKernelIsa, cortexm/kernels/kernel_isa.h): scalar, DSP or MVE.
void quantized_add(const AddParams& params, const int8_t* lhs, const int8_t* rhs, int8_t* output);

void quantized_add_reference(const AddParams& params, const int8_t* lhs, const int8_t* rhs,
                             int8_t* output);

struct SubParams : RescaledBinaryParams {};

Error quantized_sub_prepare(const SubParams& params);

// One variant on every core (scalar).
void quantized_sub(const SubParams& params, const int8_t* lhs, const int8_t* rhs, int8_t* output);

void quantized_sub_reference(const SubParams& params, const int8_t* lhs, const int8_t* rhs,
                             int8_t* output);

}  // namespace cortexm
