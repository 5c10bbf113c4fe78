// QuantizedMul: arm_elementwise_mul_s8 with broadcasting.
#include "cortexm/kernels/quantized_mul.h"

#include "runtime/ops/binary_layout.h"

namespace cortexm::runtime {

namespace {

Status decode(const OpContext& ctx, MulParams* p) {
  const auto* params = ctx.op.params_as_MulParams();
  CORTEXM_RETURN_IF_STATUS(binary_shape(ctx, &p->shape));
  p->lhs_offset = params->lhs_offset();
  p->rhs_offset = params->rhs_offset();
  p->output_offset = params->output_offset();
  p->output_multiplier = params->output_multiplier();
  p->output_shift = params->output_shift();
  p->activation_min = params->activation_min();
  p->activation_max = params->activation_max();
  return kStatusOk;
}

}  // namespace

Status prepare_quantized_mul(const OpContext& ctx) {
  MulParams p;
  CORTEXM_RETURN_IF_STATUS(decode(ctx, &p));
  const Error error = quantized_mul_prepare(p);
  return error.ok() ? kStatusOk : ctx.fail(error);
}

void run_quantized_mul(const OpContext& ctx) {
  MulParams p;
  decode(ctx, &p);
  quantized_mul(p, reinterpret_cast<const int8_t*>(ctx.input(0).data),
                reinterpret_cast<const int8_t*>(ctx.input(1).data),
                reinterpret_cast<int8_t*>(ctx.output().data));
}

}  // namespace cortexm::runtime
