// Requantize: int8 -> int8 at other qparams over the bytes (input and output share their layout).
#include "cortexm/kernels/requantize_tensor.h"

#include "ops/quant/runtime/requantize_codec.h"
#include "runtime/op_context.h"

namespace cortexm::runtime {

namespace {

RequantizeParams decode(const OpContext& ctx) {
  RequantizeParams p;
  p.size = ctx.input(0).numel();
  program::decode_requantize(*ctx.op.params_as_RequantizeParams(), &p);
  return p;
}

}  // namespace

Status prepare_requantize(const OpContext& ctx) {
  const TensorView in = ctx.input(0), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "input", in, DType::kInt8));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "output", out, DType::kInt8));
  if (!in.same_layout(out)) return ctx.unsupported("output", 0, "must have the input's shape and layout");
  const Error error = requantize_tensor_prepare(decode(ctx));
  return error.ok() ? kStatusOk : ctx.fail(error);
}

void run_requantize(const OpContext& ctx) {
  requantize_tensor(decode(ctx), reinterpret_cast<const int8_t*>(ctx.input(0).data),
                    reinterpret_cast<int8_t*>(ctx.output().data));
}

}  // namespace cortexm::runtime
