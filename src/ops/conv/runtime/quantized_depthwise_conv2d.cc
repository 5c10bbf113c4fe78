// QuantizedDepthwiseConv2d: NHWC int8 input, IHWO int8 weights [1, KH, KW, C * m], optional int32
// bias.
#include "cortexm/kernels/quantized_depthwise_conv2d.h"

#include "ops/conv/runtime/conv.h"

namespace cortexm::runtime {

CORTEXM_CONV_RUNTIME_OP(quantized_depthwise_conv2d, DepthwiseConv2dParams)

int64_t in_place_lag_quantized_depthwise_conv2d(const OpContext& ctx) {
  return conv_in_place_lag<DepthwiseConv2dParams, quantized_depthwise_conv2d_in_place_lag>(ctx);
}

}  // namespace cortexm::runtime
