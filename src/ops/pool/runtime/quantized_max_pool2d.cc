// QuantizedMaxPool2d: NHWC int8, arm_max_pool_s8. QuantizedMaxPool2dS16: NHWC int16,
// arm_max_pool_s16.
#include "cortexm/kernels/quantized_max_pool2d.h"

#include "ops/pool/runtime/pool_decode.h"

namespace cortexm::runtime {

Status prepare_quantized_max_pool2d(const OpContext& ctx) {
  return prepare_pool(ctx, quantized_max_pool2d_prepare);
}

void run_quantized_max_pool2d(const OpContext& ctx) {
  quantized_max_pool2d(decode_pool(ctx), reinterpret_cast<const int8_t*>(ctx.input(0).data),
                       reinterpret_cast<int8_t*>(ctx.output().data));
}

Status prepare_quantized_max_pool2d_s16(const OpContext& ctx) {
  return prepare_pool(ctx, quantized_max_pool2d_s16_prepare, DType::kInt16);
}

void run_quantized_max_pool2d_s16(const OpContext& ctx) {
  quantized_max_pool2d_s16(decode_pool(ctx), reinterpret_cast<const int16_t*>(ctx.input(0).data),
                           reinterpret_cast<int16_t*>(ctx.output().data));
}

}  // namespace cortexm::runtime
