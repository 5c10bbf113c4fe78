// AddParams table -> MinMaxParams (shared by QuantizedMaximum and QuantizedMinimum).
#pragma once

#include "cortexm/kernels/minmax_params.h"
#include "runtime/ops/binary_layout.h"

namespace cortexm::runtime {

inline Status decode_minmax(const OpContext& ctx, MinMaxParams* p) {
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

}  // namespace cortexm::runtime
