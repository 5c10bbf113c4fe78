// cortex_m.quantized_depthwise_conv2d: NHWC int8 input, IHWO filter [1, KH, KW, C_in * m],
// output channel c * m + j reads input channel c (arm_depthwise_conv_s8 arithmetic).
#pragma once

#include "cortexm/kernels/conv_params.h"

namespace cortexm {

struct DepthwiseConv2dParams {
  Dims4 input;   // N, H, W, C_in
  Dims4 filter;  // 1, KH, KW, C_in * depth_multiplier
  Dims4 output;  // N, OH, OW, C_in * depth_multiplier
  int32_t depth_multiplier = 1;
  ConvGeometry geometry;
  ConvQuantParams quant;
};

Dims4 quantized_depthwise_conv2d_output_dims(const DepthwiseConv2dParams& params);

Error quantized_depthwise_conv2d_prepare(const DepthwiseConv2dParams& params);

// Bytes of scratch the kernel for `isa` needs, 4-byte aligned. Scalar: one int32 accumulator per
// output channel (C_in * depth_multiplier). DSP and MVE: none (their variants keep the
// accumulators in registers). (A program reserves its isa's size; a runtime
// whose kernel needs more adds a region after the arena: runtime::Program::required_arena_size.)
size_t quantized_depthwise_conv2d_scratch_size(const DepthwiseConv2dParams& params, Isa isa);

// In place: how many bytes below its input the output must start for the kernel (every variant)
// to write it over that input, the output overlapping the input's first bytes. Every variant
// writes output pixel (n, y, x) only after it has read every window of the output pixels before
// (n, max(y - 1, 0), x) in raster order (scalar: one pixel at a time; DSP: two horizontal
// neighbours per pass over the channels; MVE: a pixel and its horizontal neighbour or the pixel
// below it per pass; the host's x86 variants: one pixel at a time), so the lag is the largest excess of the output
// bytes written up to a pixel over the input bytes below the first input pixel those later windows
// read. At least one output pixel. `params` must have passed quantized_depthwise_conv2d_prepare.
int64_t quantized_depthwise_conv2d_in_place_lag(const DepthwiseConv2dParams& params);

// The variant this build selects (kKernelIsa, cortexm/kernels/kernel_isa.h): scalar, DSP or MVE. bias may be null (treated as zeros). Accumulates in 32
// bits as the target does: bias + the sum of taps wraps modulo 2^32.
void quantized_depthwise_conv2d(const DepthwiseConv2dParams& params, const int8_t* input,
                                const int8_t* filter, const int32_t* bias, int8_t* output,
                                void* scratch);

void quantized_depthwise_conv2d_reference(const DepthwiseConv2dParams& params,
                                          const int8_t* input, const int8_t* filter,
                                          const int32_t* bias, int8_t* output);

}  // namespace cortexm
