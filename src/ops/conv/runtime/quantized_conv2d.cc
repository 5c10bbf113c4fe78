// QuantizedConv2d: NHWC int8 input, OHWI int8 weights [C_out, KH, KW, C_in / groups], optional
// int32 bias.
#include "cortexm/kernels/quantized_conv2d.h"

#include "ops/conv/runtime/conv.h"
#include "runtime/ops/host_pack_ops.h"

namespace cortexm::runtime {

CORTEXM_CONV_RUNTIME_OP(quantized_conv2d, Conv2dParams)

int64_t in_place_lag_quantized_conv2d(const OpContext& ctx) {
  return conv_in_place_lag<Conv2dParams, quantized_conv2d_in_place_lag>(ctx);
}

size_t host_pack_quantized_conv2d(const OpContext& ctx, HostVariant variant, void* packed) {
  Conv2dParams p;
  if (!decode_conv_op(ctx, &p).ok()) return 0;  // (load has checked it)
  p.host_variant = variant;
  return host_pack_weights<Conv2dParams, quantized_conv2d_host_packed_size, quantized_conv2d_host_pack>(ctx, p,
                                                                                                         packed);
}

}  // namespace cortexm::runtime
