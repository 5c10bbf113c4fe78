// QuantizedTransposeConv2d: NHWC int8 input, OHWI int8 weights [C_out, KH, KW, C_in], optional
// int32 bias; groups 1, dilation 1. Scratch holds the int16 column of one output pixel.
#include "cortexm/kernels/quantized_transpose_conv2d.h"

#include "ops/conv/runtime/conv.h"

namespace cortexm::runtime {

Status prepare_quantized_transpose_conv2d(const OpContext& ctx) {
  return prepare_conv<TransposeConv2dParams, quantized_transpose_conv2d_prepare, quantized_transpose_conv2d_scratch_size>(ctx);
}

extern const OpState quantized_transpose_conv2d_state = kConvState<TransposeConv2dParams, quantized_transpose_conv2d_scratch_size>;

void run_quantized_transpose_conv2d(const OpContext& ctx) { run_conv<TransposeConv2dParams, quantized_transpose_conv2d, quantized_transpose_conv2d_scratch_size>(ctx); }

}  // namespace cortexm::runtime
