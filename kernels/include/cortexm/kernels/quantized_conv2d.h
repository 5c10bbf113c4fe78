// cortex_m.quantized_conv2d: NHWC int8 input, OHWI int8 filter, int32 bias, per-channel requantize
// (arm_convolve_s8 arithmetic). Groups = input C / filter C (the filter's last dim is C_in / groups).
#pragma once

#include "cortexm/kernels/conv_params.h"
#include "cortexm/kernels/host_variant.h"

namespace cortexm {

struct Conv2dParams {
  Dims4 input;   // N, H, W, C_in
  Dims4 filter;  // C_out, KH, KW, C_in / groups
  Dims4 output;  // N, OH, OW, C_out
  ConvGeometry geometry;
  ConvQuantParams quant;
  // The bias already holds bias + input_offset * (sum of the filter row), modulo 2^32
  // (quantized_conv2d_fold_bias): the kernel then sums x * w over the window, padded taps taking
  // x = -input_offset, which equals bias + sum (x + input_offset) * w over the taps inside.
  bool bias_includes_input_offset = false;
  // The host only: the x86 variant the kernel runs (one for the whole call; a run of a program
  // passes the one it read at its start), or kHostVariantInUse.
  HostVariant host_variant = kHostVariantInUse;
  // The host only: quantized_conv2d_host_pack's output for this filter and bias, or null (the kernel
  // then reads the filter). Used only when packed for the variant the kernel runs.
  const void* host_packed = nullptr;

  int32_t groups() const { return filter.c > 0 ? input.c / filter.c : 0; }
};

// Output dims implied by input, filter and geometry (0 extents when the window never fits).
Dims4 quantized_conv2d_output_dims(const Conv2dParams& params);

Error quantized_conv2d_prepare(const Conv2dParams& params);

// Bytes of scratch the kernel for `isa` needs; the caller passes at least this much, 4-byte
// aligned. Scalar: the im2col columns of 4 output pixels, 4 * KH * KW * (C_in / groups) int16
// values; DSP: those of 2 pixels. MVE: int8 columns of 4 pixels. None on any isa for a 1x1 window
// without padding (the DSP variant keeps its columns in the part of `output` not yet written, or
// in place in the bytes between its block's outputs and the input still to read). (A program
// reserves its isa's size; a runtime whose kernel needs more adds a region after the arena:
// runtime::Program::required_arena_size.)
size_t quantized_conv2d_scratch_size(const Conv2dParams& params, Isa isa);

// In place: how many bytes below its input the output must start for the kernel (every variant)
// to write it over that input, or -1 when it cannot (several groups: each rereads the whole input;
// a strided 1x1 window without padding: its kernels read rows in place between stores).
// A pointwise conv (1x1 window, stride 1, no padding) reads output pixel i's input pixel i in
// place: every variant takes the pixels of an image in blocks in raster order and writes a block's
// outputs only over input bytes of the blocks before it (scalar and MVE: blocks of 4 pixels; DSP:
// 2 pixels, its widened int16 columns (4 * C_in bytes) kept word-aligned between the block's
// outputs and its input; the host's x86 variants: runs of rows as long as the distance allows, at
// least one pixel), so the lag is the largest, over those blocks, of the output bytes up to the
// block's end minus the input bytes before its first pixel (plus the DSP's columns). Any other
// window is gathered into scratch a block at a time before the block's first store (blocks in
// raster order: scalar and MVE 4 pixels, DSP 2, x86 8), so the lag is the largest, over pixels e,
// of the output bytes before e minus the lowest input byte a window from e on reads (its clamped
// top-left tap). `params` must have passed quantized_conv2d_prepare.
int64_t quantized_conv2d_in_place_lag(const Conv2dParams& params);

// The host only (0 elsewhere): bytes of the filter and bias packed for the x86 variant
// params.host_variant (kHostVariantInUse: the one in use; any variant's layout on any CPU), once, at load (0: the scalar kernels read the filter
// as it is). quantized_conv2d_host_pack writes them to `packed` (64-byte aligned); params.host_packed
// then points there (a run on another variant reads the filter).
size_t quantized_conv2d_host_packed_size(const Conv2dParams& params);
void quantized_conv2d_host_pack(const Conv2dParams& params, const int8_t* filter, const int32_t* bias,
                                void* packed);

// The variant this build selects (kKernelIsa, cortexm/kernels/kernel_isa.h): scalar, DSP or MVE. bias may be null (treated as zeros). Accumulates in 32
// bits as the target does: bias + the sum of taps wraps modulo 2^32.
void quantized_conv2d(const Conv2dParams& params, const int8_t* input, const int8_t* filter,
                      const int32_t* bias, int8_t* output, void* scratch);

// The code paths of quantized_conv2d, for firmware that links only the paths its program takes
// (quantized_conv2d_on_paths). A call takes one path of each pair: bias folded or not, filter rows
// (KH * KW * C_in / groups taps) of at most 16 taps or longer.
enum Conv2dPath : uint32_t {
  kConv2dFoldedBias = 1u << 0,
  kConv2dUnfoldedBias = 1u << 1,
  kConv2dShortRows = 1u << 2,
  kConv2dLongRows = 1u << 3,
  kConv2dAllPaths = (1u << 4) - 1,
};

// The paths a call with these params takes (Conv2dPath bits).
uint32_t quantized_conv2d_paths(const Conv2dParams& params);

// quantized_conv2d with only the code of the Conv2dPath bits Paths (any of 0 to kConv2dAllPaths):
// the same results for a call whose quantized_conv2d_paths(params) are all in Paths; a call
// taking another path writes nothing. Only the MVE variant has separate paths: the others run
// quantized_conv2d.
template <uint32_t Paths>
void quantized_conv2d_on_paths(const Conv2dParams& params, const int8_t* input,
                               const int8_t* filter, const int32_t* bias, int8_t* output,
                               void* scratch);

// folded[oc] = (bias ? bias[oc] : 0) + input_offset * (sum of filter row oc), modulo 2^32: the
// bias quantized_conv2d takes with bias_includes_input_offset. folded has C_out entries.
void quantized_conv2d_fold_bias(const Conv2dParams& params, const int8_t* filter,
                                const int32_t* bias, int32_t* folded);

// Plain-loop reference the optimized variants must match bit for bit. It takes the unfolded bias
// and does not read bias_includes_input_offset.
void quantized_conv2d_reference(const Conv2dParams& params, const int8_t* input,
                                const int8_t* filter, const int32_t* bias, int8_t* output);

}  // namespace cortexm
