// QuantizedMulS16: arm_elementwise_mul_s16 with broadcasting (MulParams; offsets must be 0).
#include "cortexm/kernels/quantized_mul_s16.h"

#include "runtime/ops/binary_layout.h"

namespace cortexm::runtime {

namespace {

Status decode(const OpContext& ctx, MulS16Params* p) {
  const auto* params = ctx.op.params_as_MulParams();
  CORTEXM_RETURN_IF_STATUS(binary_shape(ctx, &p->shape, DType::kInt16));
  CORTEXM_RETURN_IF_STATUS(require_zero_offsets(ctx, params));
  p->output_multiplier = params->output_multiplier();
  p->output_shift = params->output_shift();
  p->activation_min = params->activation_min();
  p->activation_max = params->activation_max();
  return kStatusOk;
}

}  // namespace

Status prepare_quantized_mul_s16(const OpContext& ctx) {
  MulS16Params p;
  CORTEXM_RETURN_IF_STATUS(decode(ctx, &p));
  const Error error = quantized_mul_s16_prepare(p);
  return error.ok() ? kStatusOk : ctx.fail(error);
}

void run_quantized_mul_s16(const OpContext& ctx) {
  MulS16Params p;
  decode(ctx, &p);
  quantized_mul_s16(p, reinterpret_cast<const int16_t*>(ctx.input(0).data),
                    reinterpret_cast<const int16_t*>(ctx.input(1).data),
                    reinterpret_cast<int16_t*>(ctx.output().data));
}

}  // namespace cortexm::runtime
