// cortex_m.quantized_conv2d_s16: the 16x8 convolution (arm_convolve_s16 arithmetic). NHWC int16
// input with zero point 0, OHWI int8 filter, int64 bias, 64-bit accumulator, per-channel
// requantize by arm_nn_requantize_s64 (the reduced 16-bit multiplier, requantize.h), int16 output
// with zero point 0 clamped to [activation_min, activation_max]. Groups = input C / filter C, so a
// single-channel input (Silero's STFT) is the groups-1 case.
#pragma once

#include "cortexm/kernels/conv_params.h"
#include "cortexm/kernels/kernel_isa.h"

namespace cortexm {

struct Conv2dS16Params {
  Dims4 input;   // N, H, W, C_in
  Dims4 filter;  // C_out, KH, KW, C_in / groups
  Dims4 output;  // N, OH, OW, C_out
  ConvGeometry geometry;
  const int32_t* multipliers = nullptr;  // one per output channel, in [0, 2^31)
  const int32_t* shifts = nullptr;       // one per output channel, in [-31, 7]
  int32_t activation_min = -32768;
  int32_t activation_max = 32767;

  int32_t groups() const { return filter.c > 0 ? input.c / filter.c : 0; }
};

// Output dims implied by input, filter and geometry (0 extents when the window never fits).
Dims4 quantized_conv2d_s16_output_dims(const Conv2dS16Params& params);

Error quantized_conv2d_s16_prepare(const Conv2dS16Params& params);

// Bytes of scratch quantized_conv2d_s16 needs on `isa` (4-byte aligned). DSP: one int16 im2col
// column of KH * KW * (C_in / groups) taps. Scalar and MVE: the same, or 0 when every window is one
// run of the input read in place (a 1 x KW filter without top / left padding whose windows stay
// inside the input, over consecutive taps: KW 1, or dilation 1 and groups 1).
size_t quantized_conv2d_s16_scratch_size(const Conv2dS16Params& params, Isa isa);

// bias may be null (zeros). Sums are exact in 64 bits (|tap| <= 2^22); the bias is added to them
// modulo 2^64, and requantize_s64 is exact while the sum stays within +-2^47 as CMSIS-NN requires.
void quantized_conv2d_s16(const Conv2dS16Params& params, const int16_t* input,
                          const int8_t* filter, const int64_t* bias, int16_t* output,
                          void* scratch);

// Plain-loop reference the optimized kernel must match bit for bit.
void quantized_conv2d_s16_reference(const Conv2dS16Params& params, const int16_t* input,
                                    const int8_t* filter, const int64_t* bias, int16_t* output);

}  // namespace cortexm
