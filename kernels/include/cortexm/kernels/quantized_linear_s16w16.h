// cortex_m.quantized_linear_s16w16: the 16x16 fully connected layer. As quantized_linear_s16
// (int16 input [batches, K] with zero point 0, int64 bias, 64-bit accumulator, per-tensor or
// per-channel arm_nn_requantize_s64 with the reduced 16-bit multiplier, int16 output clamped to
// [activation_min, activation_max]) but with int16 weights [C_out, K] (symmetric, zero point 0):
// every product |x * w| <= 2^30 goes straight into the 64-bit sum.
#pragma once

#include "cortexm/kernels/quantized_linear_s16.h"

namespace cortexm {

// LinearS16Params of a 16x16 linear: its own type, so the op tables tell the two kernels apart.
struct LinearS16W16Params : LinearS16Params {};

// quantized_linear_s16_prepare's checks, and K <= kMaxTapsS16W16 (requantize.h says why).
Error quantized_linear_s16w16_prepare(const LinearS16W16Params& params);

// 0 on every isa: every variant reads the input row in place.
size_t quantized_linear_s16w16_scratch_size(const LinearS16W16Params& params, Isa isa);

// bias may be null (zeros). Sums are exact in 64 bits; the bias is added to them modulo 2^64.
void quantized_linear_s16w16(const LinearS16W16Params& params, const int16_t* input,
                             const int16_t* weights, const int64_t* bias, int16_t* output,
                             void* scratch);

// Plain-loop reference the optimized kernel must match bit for bit.
void quantized_linear_s16w16_reference(const LinearS16W16Params& params, const int16_t* input,
                                       const int16_t* weights, const int64_t* bias,
                                       int16_t* output);

}  // namespace cortexm
