// QuantizedConv2dS16W16: NHWC int16 input, OHWI int16 weights, optional int64 bias, NHWC int16
// output (the 16x8 conv's arithmetic with int16 weights; the Conv2dParams offsets must be 0).
#include "cortexm/kernels/quantized_conv2d_s16w16.h"

#include "ops/conv/runtime/conv.h"

namespace cortexm::runtime {

CORTEXM_CONV_RUNTIME_OP(quantized_conv2d_s16w16, Conv2dS16W16Params)

}  // namespace cortexm::runtime
