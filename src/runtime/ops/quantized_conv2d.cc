// QuantizedConv2d: NHWC int8 input, OHWI int8 weights [C_out, KH, KW, C_in / groups], optional
// int32 bias.
#include "cortexm/kernels/quantized_conv2d.h"

#include "runtime/ops/conv.h"

namespace cortexm::runtime {

Status prepare_quantized_conv2d(const OpContext& ctx) {
  return prepare_conv<Conv2dParams, quantized_conv2d_prepare, quantized_conv2d_scratch_size>(ctx);
}

void run_quantized_conv2d(const OpContext& ctx) { run_conv<Conv2dParams, quantized_conv2d, quantized_conv2d_scratch_size>(ctx); }

}  // namespace cortexm::runtime
