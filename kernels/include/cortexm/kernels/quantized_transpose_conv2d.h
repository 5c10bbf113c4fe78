// cortex_m.quantized_transpose_conv2d (arm_transpose_conv_s8 arithmetic): NHWC int8 input, OHWI
// int8 filter [C_out, KH, KW, C_in], int32 bias, per-channel requantize; groups 1, dilation 1.
// Input pixel (iy, ix) times filter tap (kh, kw) lands on output (iy * stride_h + kh - pad_top,
// ix * stride_w + kw - pad_left); output_padding adds rows / columns at the bottom / right, so
// OH = (IH - 1) * stride_h + KH - pad_top - pad_bottom + output_padding_h (W likewise).
#pragma once

#include "cortexm/kernels/conv_params.h"

namespace cortexm {

struct TransposeConv2dParams {
  Dims4 input;   // N, H, W, C_in
  Dims4 filter;  // C_out, KH, KW, C_in
  Dims4 output;  // N, OH, OW, C_out
  int32_t stride_h = 1, stride_w = 1;
  Padding2d padding;
  int32_t output_padding_h = 0, output_padding_w = 0;
  ConvQuantParams quant;
};

// Output dims implied by input, filter, stride, padding and output padding (0 extents when
// negative).
Dims4 quantized_transpose_conv2d_output_dims(const TransposeConv2dParams& params);

Error quantized_transpose_conv2d_prepare(const TransposeConv2dParams& params);

// Bytes of scratch the kernel for `isa` needs (4-byte aligned): the int16 column of one output
// pixel, KH * KW * C_in values (input + input_offset at the taps that land on it, 0 elsewhere).
size_t quantized_transpose_conv2d_scratch_size(const TransposeConv2dParams& params, Isa isa);

void quantized_transpose_conv2d(const TransposeConv2dParams& params, const int8_t* input,
                                const int8_t* filter, const int32_t* bias, int8_t* output,
                                void* scratch);

void quantized_transpose_conv2d_reference(const TransposeConv2dParams& params,
                                          const int8_t* input, const int8_t* filter,
                                          const int32_t* bias, int8_t* output);

}  // namespace cortexm
