// FloatUnary (float fallback): an elementwise float32 function through the portable kernels the
// interpreter also runs; input and output share their layout, so it runs over the bytes.
#include "cortexm/portable/unary.h"

#include "runtime/op_context.h"

namespace cortexm::runtime {

namespace {

bool to_portable(uint8_t fn, portable::UnaryOp* op) {
  switch (fn) {
    case fb::UnaryFn_Relu: *op = portable::UnaryOp::kRelu; return true;
    case fb::UnaryFn_Hardswish: *op = portable::UnaryOp::kHardswish; return true;
    case fb::UnaryFn_Silu: *op = portable::UnaryOp::kSilu; return true;
    case fb::UnaryFn_Sigmoid: *op = portable::UnaryOp::kSigmoid; return true;
    case fb::UnaryFn_Tanh: *op = portable::UnaryOp::kTanh; return true;
    case fb::UnaryFn_Sqrt: *op = portable::UnaryOp::kSqrt; return true;
    case fb::UnaryFn_Hardsigmoid: *op = portable::UnaryOp::kHardsigmoid; return true;
    case fb::UnaryFn_Abs: *op = portable::UnaryOp::kAbs; return true;
    case fb::UnaryFn_Gelu: *op = portable::UnaryOp::kGelu; return true;
    case fb::UnaryFn_GeluTanh: *op = portable::UnaryOp::kGeluTanh; return true;
    default: return false;
  }
}

portable::UnaryParams decode(const OpContext& ctx) {
  portable::UnaryParams p;
  to_portable(ctx.op.params_as_UnaryParams()->fn(), &p.op);
  p.numel = ctx.input(0).numel();
  return p;
}

}  // namespace

Status prepare_float_unary(const OpContext& ctx) {
  const TensorView in = ctx.input(0), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "input", in, DType::kFloat32));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "output", out, DType::kFloat32));
  if (!in.same_layout(out)) return ctx.unsupported("output", 0, "must have the input's shape and layout");
  portable::UnaryOp op;
  const uint8_t fn = ctx.op.params_as_UnaryParams()->fn();
  if (!to_portable(fn, &op)) return ctx.fail("params.fn", fn, "must be a known UnaryFn");
  const Error error = portable::unary_prepare(decode(ctx));
  return error.ok() ? kStatusOk : ctx.fail(error);
}

void run_float_unary(const OpContext& ctx) {
  portable::unary_f32(decode(ctx), reinterpret_cast<const float*>(ctx.input(0).data),
                      reinterpret_cast<float*>(ctx.output().data));
}

}  // namespace cortexm::runtime
