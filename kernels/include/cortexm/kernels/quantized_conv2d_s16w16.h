// cortex_m.quantized_conv2d_s16w16: the 16x16 convolution. As quantized_conv2d_s16 (NHWC int16
// input with zero point 0, int64 bias, 64-bit accumulator, per-channel arm_nn_requantize_s64 with
// the reduced 16-bit multiplier, int16 output clamped to [activation_min, activation_max]) but with
// an OHWI int16 filter (per-channel symmetric, zero point 0): every product |x * w| <= 2^30 goes
// straight into the 64-bit sum. Same params, geometry and groups as the 16x8 conv.
#pragma once

#include "cortexm/kernels/quantized_conv2d_s16.h"

namespace cortexm {

// Conv2dS16Params of a 16x16 conv: its own type, so the op tables tell the two kernels apart.
struct Conv2dS16W16Params : Conv2dS16Params {};

Dims4 quantized_conv2d_s16w16_output_dims(const Conv2dS16W16Params& params);

// quantized_conv2d_s16_prepare's checks, and at most kMaxTapsS16W16 taps per output
// (KH * KW * C_in / groups; requantize.h says why).
Error quantized_conv2d_s16w16_prepare(const Conv2dS16W16Params& params);

// Bytes of scratch on `isa` (4-byte aligned): one int16 im2col column of KH * KW * (C_in / groups)
// taps, or 0 when every window is one run of the input read in place (as quantized_conv2d_s16's
// scalar and MVE variants; here on DSP too, whose SMLALDs read the column in order).
size_t quantized_conv2d_s16w16_scratch_size(const Conv2dS16W16Params& params, Isa isa);

// bias may be null (zeros). Sums are exact in 64 bits; the bias is added to them modulo 2^64.
void quantized_conv2d_s16w16(const Conv2dS16W16Params& params, const int16_t* input,
                             const int16_t* filter, const int64_t* bias, int16_t* output,
                             void* scratch);

// Plain-loop reference the optimized kernel must match bit for bit.
void quantized_conv2d_s16w16_reference(const Conv2dS16W16Params& params, const int16_t* input,
                                       const int16_t* filter, const int64_t* bias, int16_t* output);

}  // namespace cortexm
