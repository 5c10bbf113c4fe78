// QuantizedConv2dS16: NHWC int16 input, OHWI int8 weights, optional int64 bias, NHWC int16 output
// (arm_convolve_s16 arithmetic; the Conv2dParams offsets must be 0).
#include "cortexm/kernels/quantized_conv2d_s16.h"

#include "ops/conv/runtime/conv.h"

namespace cortexm::runtime {

CORTEXM_CONV_RUNTIME_OP(quantized_conv2d_s16, Conv2dS16Params)

}  // namespace cortexm::runtime
