// Pool2dParams table -> kernel params, and the checks both pools share.
#pragma once

#include "cortexm/kernels/pool_params.h"
#include "runtime/ops/conv_decode.h"

namespace cortexm::runtime {

inline Pool2dParams decode_pool(const OpContext& ctx) {
  const auto* params = ctx.op.params_as_Pool2dParams();
  Pool2dParams p;
  p.input = nhwc_dims(ctx.input(0));
  p.output = nhwc_dims(ctx.output());
  p.kernel_h = params->kernel_h();
  p.kernel_w = params->kernel_w();
  p.stride_h = params->stride_h();
  p.stride_w = params->stride_w();
  p.padding = {params->pad_top(), params->pad_left(), params->pad_bottom(), params->pad_right()};
  p.activation_min = params->activation_min();
  p.activation_max = params->activation_max();
  return p;
}

inline Status prepare_pool(const OpContext& ctx, Error (*prepare)(const Pool2dParams&)) {
  CORTEXM_RETURN_IF_STATUS(require_nhwc_int8(ctx, "input", ctx.input(0)));
  CORTEXM_RETURN_IF_STATUS(require_nhwc_int8(ctx, "output", ctx.output()));
  const Error error = prepare(decode_pool(ctx));
  return error.ok() ? kStatusOk : ctx.fail(error);
}

}  // namespace cortexm::runtime
