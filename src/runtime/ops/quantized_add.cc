// QuantizedAdd: arm_elementwise_add_s8 with broadcasting.
#include "cortexm/kernels/quantized_add.h"

#include "runtime/ops/binary_layout.h"

namespace cortexm::runtime {

namespace {

Status decode(const OpContext& ctx, AddParams* p) {
  const auto* params = ctx.op.params_as_AddParams();
  CORTEXM_RETURN_IF_STATUS(binary_shape(ctx, &p->shape));
  p->lhs_offset = params->lhs_offset();
  p->lhs_multiplier = params->lhs_multiplier();
  p->lhs_shift = params->lhs_shift();
  p->rhs_offset = params->rhs_offset();
  p->rhs_multiplier = params->rhs_multiplier();
  p->rhs_shift = params->rhs_shift();
  p->output_offset = params->output_offset();
  p->output_multiplier = params->output_multiplier();
  p->output_shift = params->output_shift();
  p->activation_min = params->activation_min();
  p->activation_max = params->activation_max();
  return kStatusOk;
}

}  // namespace

Status prepare_quantized_add(const OpContext& ctx) {
  AddParams p;
  CORTEXM_RETURN_IF_STATUS(decode(ctx, &p));
  const Error error = quantized_add_prepare(p);
  return error.ok() ? kStatusOk : ctx.fail(error);
}

void run_quantized_add(const OpContext& ctx) {
  AddParams p;
  decode(ctx, &p);
  quantized_add(p, reinterpret_cast<const int8_t*>(ctx.input(0).data),
                reinterpret_cast<const int8_t*>(ctx.input(1).data),
                reinterpret_cast<int8_t*>(ctx.output().data));
}

}  // namespace cortexm::runtime
