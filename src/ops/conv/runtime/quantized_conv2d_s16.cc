// QuantizedConv2dS16: NHWC int16 input, OHWI int8 weights, optional int64 bias, NHWC int16 output
// (arm_convolve_s16 arithmetic; the Conv2dParams offsets must be 0).
#include "cortexm/kernels/quantized_conv2d_s16.h"

#include "ops/conv/runtime/conv.h"

namespace cortexm::runtime {

Status prepare_quantized_conv2d_s16(const OpContext& ctx) {
  return prepare_conv<Conv2dS16Params, quantized_conv2d_s16_prepare, quantized_conv2d_s16_scratch_size>(ctx);
}

extern const OpState quantized_conv2d_s16_state = kConvState<Conv2dS16Params, quantized_conv2d_s16_scratch_size>;

void run_quantized_conv2d_s16(const OpContext& ctx) { run_conv<Conv2dS16Params, quantized_conv2d_s16, quantized_conv2d_s16_scratch_size>(ctx); }

}  // namespace cortexm::runtime
