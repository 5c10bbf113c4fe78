// QuantizedConv2d: NHWC int8 input, OHWI int8 weights [C_out, KH, KW, C_in / groups], optional
// int32 bias.
#include "cortexm/kernels/quantized_conv2d.h"

#include "runtime/ops/conv.h"
#include "runtime/ops/host_pack_ops.h"

namespace cortexm::runtime {

Status prepare_quantized_conv2d(const OpContext& ctx) {
  return prepare_conv<Conv2dParams, quantized_conv2d_prepare, quantized_conv2d_scratch_size>(ctx);
}

void run_quantized_conv2d(const OpContext& ctx) { run_conv<Conv2dParams, quantized_conv2d, quantized_conv2d_scratch_size>(ctx); }

size_t host_pack_quantized_conv2d(const OpContext& ctx, void* packed) {
  Conv2dParams p;
  if (!decode_conv_op(ctx, &p).ok()) return 0;  // (load has checked it)
  const size_t bytes = quantized_conv2d_host_packed_size(p);
  if (packed && bytes > 0)
    quantized_conv2d_host_pack(p, reinterpret_cast<const int8_t*>(ctx.input(1).data),
                               ctx.has_input(2) ? reinterpret_cast<const int32_t*>(ctx.input(2).data) : nullptr,
                               packed);
  return bytes;
}

}  // namespace cortexm::runtime
