// QuantizedDepthwiseConv2d: NHWC int8 input, IHWO int8 weights [1, KH, KW, C * m], optional int32
// bias.
#include "cortexm/kernels/quantized_depthwise_conv2d.h"

#include "ops/conv/runtime/conv.h"

namespace cortexm::runtime {

Status prepare_quantized_depthwise_conv2d(const OpContext& ctx) {
  return prepare_conv<DepthwiseConv2dParams, quantized_depthwise_conv2d_prepare, quantized_depthwise_conv2d_scratch_size>(ctx);
}

int64_t in_place_lag_quantized_depthwise_conv2d(const OpContext& ctx) {
  DepthwiseConv2dParams p;
  decode_conv_op(ctx, &p);
  return quantized_depthwise_conv2d_in_place_lag(p);
}

extern const OpState quantized_depthwise_conv2d_state = kConvState<DepthwiseConv2dParams, quantized_depthwise_conv2d_scratch_size>;

void run_quantized_depthwise_conv2d(const OpContext& ctx) { run_conv<DepthwiseConv2dParams, quantized_depthwise_conv2d, quantized_depthwise_conv2d_scratch_size>(ctx); }

}  // namespace cortexm::runtime
