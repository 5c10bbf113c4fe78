// QuantizedTransposeConv2d: NHWC int8 input, OHWI int8 weights [C_out, KH, KW, C_in], optional
// int32 bias; groups 1, dilation 1. Scratch holds the int16 column of one output pixel.
#include "cortexm/kernels/quantized_transpose_conv2d.h"

#include "ops/conv/runtime/conv.h"

namespace cortexm::runtime {

CORTEXM_CONV_RUNTIME_OP(quantized_transpose_conv2d, TransposeConv2dParams)

}  // namespace cortexm::runtime
