// QuantizedConv2d: NHWC int8 input, OHWI int8 weights [C_out, KH, KW, C_in / groups], optional
// int32 bias.
#include "cortexm/kernels/quantized_conv2d.h"

#include "ops/conv/runtime/conv.h"
#include "runtime/ops/host_pack_ops.h"

namespace cortexm::runtime {

Status prepare_quantized_conv2d(const OpContext& ctx) {
  return prepare_conv<Conv2dParams, quantized_conv2d_prepare, quantized_conv2d_scratch_size>(ctx);
}

int64_t in_place_lag_quantized_conv2d(const OpContext& ctx) {
  Conv2dParams p;
  decode_conv_op(ctx, &p);
  return quantized_conv2d_in_place_lag(p);
}

extern const OpState quantized_conv2d_state = kConvState<Conv2dParams, quantized_conv2d_scratch_size>;

void run_quantized_conv2d(const OpContext& ctx) { run_conv<Conv2dParams, quantized_conv2d, quantized_conv2d_scratch_size>(ctx); }

size_t host_pack_quantized_conv2d(const OpContext& ctx, HostVariant variant, void* packed) {
  Conv2dParams p;
  if (!decode_conv_op(ctx, &p).ok()) return 0;  // (load has checked it)
  p.host_variant = variant;
  return host_pack_weights<Conv2dParams, quantized_conv2d_host_packed_size, quantized_conv2d_host_pack>(ctx, p,
                                                                                                         packed);
}

}  // namespace cortexm::runtime
