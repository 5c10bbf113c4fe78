// Pool2dParams table (ops/pool/runtime/pool2d_codec.h) + tensor dims -> kernel params, and the checks
// both pools share.
#pragma once

#include "cortexm/kernels/pool_params.h"
#include "ops/pool/runtime/pool2d_codec.h"
#include "ops/conv/runtime/conv_decode.h"

namespace cortexm::runtime {

inline Pool2dParams decode_pool(const OpContext& ctx) {
  Pool2dParams p;
  p.input = nhwc_dims(ctx.input(0));
  p.output = nhwc_dims(ctx.output());
  program::decode_pool2d(*ctx.op.params_as_Pool2dParams(), &p);
  return p;
}

inline Status prepare_pool(const OpContext& ctx, Error (*prepare)(const Pool2dParams&),
                           DType dtype = DType::kInt8) {
  CORTEXM_RETURN_IF_STATUS(require_nhwc(ctx, "input", ctx.input(0), dtype));
  CORTEXM_RETURN_IF_STATUS(require_nhwc(ctx, "output", ctx.output(), dtype));
  const Error error = prepare(decode_pool(ctx));
  return error.ok() ? kStatusOk : ctx.fail(error);
}

}  // namespace cortexm::runtime
