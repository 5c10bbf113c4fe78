// FloatUnary (float fallback): an elementwise float32 function through the portable kernels the
// interpreter also runs; input and output share their layout, so it runs over the bytes.
#include "cortexm/portable/unary.h"

#include "ops/activation/runtime/unary_codec.h"
#include "runtime/op_context.h"

namespace cortexm::runtime {

namespace {

portable::UnaryParams decode(const OpContext& ctx) {
  portable::UnaryParams p;
  program::decode_unary(*ctx.op.params_as_UnaryParams(), &p);
  p.numel = ctx.input(0).numel();
  return p;
}

}  // namespace

Status prepare_float_unary(const OpContext& ctx) {
  const TensorView in = ctx.input(0), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "input", in, DType::kFloat32));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "output", out, DType::kFloat32));
  if (!in.same_layout(out)) return ctx.unsupported("output", 0, "must have the input's shape and layout");
  portable::UnaryParams p;
  const auto* params = ctx.op.params_as_UnaryParams();
  if (!program::decode_unary(*params, &p)) return ctx.fail("params.fn", params->fn(), "must be a known UnaryFn");
  const Error error = portable::unary_prepare(decode(ctx));
  return error.ok() ? kStatusOk : ctx.fail(error);
}

void run_float_unary(const OpContext& ctx) {
  portable::unary_f32(decode(ctx), reinterpret_cast<const float*>(ctx.input(0).data),
                      reinterpret_cast<float*>(ctx.output().data));
}

}  // namespace cortexm::runtime
