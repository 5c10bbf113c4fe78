// Parameters of cortex_m.quantized_maximum / quantized_minimum. Inputs may have other qparams than
// the output: as in quantized_add, each input is offset, shifted left by 20 and requantized to a
// common scale (twice the larger input scale), the two are compared there (20 bits finer than
// the inputs), and the winner is requantized once to the output, with quantized_add's rounding.
// Quantizing is monotone, so with equal qparams everywhere this is exactly max / min of the raw
// values.
#pragma once

#include <cstdint>

#include "cortexm/kernels/rescaled_binary.h"

namespace cortexm {

constexpr int32_t kMinMaxLeftShift = 20;

struct MinMaxParams : RescaledBinaryParams {};

// Shared by both ops' prepare steps.
inline Error minmax_prepare(const MinMaxParams& params) { return check_rescaled_binary(params); }

// Elementwise maximum / minimum of two int8 tensors with numpy broadcasting
// (cortex_m.quantized_maximum, cortex_m.quantized_minimum), and their plain-loop references.
void quantized_maximum(const MinMaxParams& params, const int8_t* lhs, const int8_t* rhs,
                       int8_t* output);
void quantized_minimum(const MinMaxParams& params, const int8_t* lhs, const int8_t* rhs,
                       int8_t* output);
void quantized_maximum_reference(const MinMaxParams& params, const int8_t* lhs, const int8_t* rhs,
                                 int8_t* output);
void quantized_minimum_reference(const MinMaxParams& params, const int8_t* lhs, const int8_t* rhs,
                                 int8_t* output);

}  // namespace cortexm
