// cortex_m.quantized_depthwise_conv2d: NHWC int8 input, IHWO filter [1, KH, KW, C_in * m],
// output channel c * m + j reads input channel c (arm_depthwise_conv_s8 arithmetic).
#pragma once

#include "cortexm/kernels/conv_params.h"
#include "cortexm/kernels/host_variant.h"

namespace cortexm {

struct DepthwiseConv2dParams {
  Dims4 input;   // N, H, W, C_in
  Dims4 filter;  // 1, KH, KW, C_in * depth_multiplier
  Dims4 output;  // N, OH, OW, C_in * depth_multiplier
  int32_t depth_multiplier = 1;
  ConvGeometry geometry;
  ConvQuantParams quant;
  // The host only: the x86 variant the kernel runs (one for the whole call), or kHostVariantInUse.
  HostVariant host_variant = kHostVariantInUse;
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

// The code paths of quantized_depthwise_conv2d, for firmware that links only the paths its
// program takes (quantized_depthwise_conv2d_on_paths): depth multiplier 1 with every window's
// valid taps 2 or 3 rows by 2 or 3 columns (3x3 filters), depth multiplier 1 with other windows,
// other depth multipliers.
enum DepthwiseConv2dPath : uint32_t {
  kDepthwiseConv2dWindows2To3 = 1u << 0,
  kDepthwiseConv2dOtherWindows = 1u << 1,
  kDepthwiseConv2dMultiplier = 1u << 2,
  kDepthwiseConv2dAllPaths = (1u << 3) - 1,
};

// The paths a call with these params takes (DepthwiseConv2dPath bits); `params` must have passed
// quantized_depthwise_conv2d_prepare.
uint32_t quantized_depthwise_conv2d_paths(const DepthwiseConv2dParams& params);

// quantized_depthwise_conv2d with only the code of the DepthwiseConv2dPath bits Paths (any of 0
// to kDepthwiseConv2dAllPaths): the same results (and in-place lag) for a call whose
// quantized_depthwise_conv2d_paths(params) are all in Paths; a call taking another path leaves
// its outputs unwritten. Only the MVE variant has separate paths: the others run
// quantized_depthwise_conv2d.
template <uint32_t Paths>
void quantized_depthwise_conv2d_on_paths(const DepthwiseConv2dParams& params, const int8_t* input,
                                         const int8_t* filter, const int32_t* bias, int8_t* output,
                                         void* scratch);

void quantized_depthwise_conv2d_reference(const DepthwiseConv2dParams& params,
                                          const int8_t* input, const int8_t* filter,
                                          const int32_t* bias, int8_t* output);

}  // namespace cortexm
