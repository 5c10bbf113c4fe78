// FloatUnary (float fallback): an elementwise float32 function over the bytes (input and output
// share their layout), each with the interpreter's formula.
#include <cmath>

#include "runtime/op_context.h"

namespace cortexm::runtime {

namespace {

float relu6(float r) { return r < 0.0f ? 0.0f : (r > 6.0f ? 6.0f : r); }

template <typename Fn>
void apply(const float* in, float* out, int64_t n, Fn fn) {
  for (int64_t i = 0; i < n; ++i) out[i] = fn(in[i]);
}

}  // namespace

Status prepare_float_unary(const OpContext& ctx) {
  const TensorView in = ctx.input(0), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "input", in, DType::kFloat32));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "output", out, DType::kFloat32));
  if (!in.same_layout(out)) return ctx.unsupported("output", 0, "must have the input's shape and layout");
  const uint8_t fn = ctx.op.params_as_UnaryParams()->fn();
  if (fn > fb::UnaryFn_MAX) return ctx.fail("params.fn", fn, "must be a known UnaryFn");
  return kStatusOk;
}

void run_float_unary(const OpContext& ctx) {
  const TensorView in = ctx.input(0), out = ctx.output();
  const float* x = reinterpret_cast<const float*>(in.data);
  float* y = reinterpret_cast<float*>(out.data);
  const int64_t n = in.numel();
  switch (ctx.op.params_as_UnaryParams()->fn()) {
    case fb::UnaryFn_Relu: apply(x, y, n, [](float v) { return v > 0.0f ? v : 0.0f; }); break;
    case fb::UnaryFn_Hardswish: apply(x, y, n, [](float v) { return v * relu6(v + 3.0f) / 6.0f; }); break;
    case fb::UnaryFn_Silu: apply(x, y, n, [](float v) { return v / (1.0f + std::exp(-v)); }); break;
    case fb::UnaryFn_Sigmoid: apply(x, y, n, [](float v) { return 1.0f / (1.0f + std::exp(-v)); }); break;
    case fb::UnaryFn_Tanh: apply(x, y, n, [](float v) { return std::tanh(v); }); break;
    case fb::UnaryFn_Sqrt: apply(x, y, n, [](float v) { return std::sqrt(v); }); break;
    case fb::UnaryFn_Hardsigmoid: apply(x, y, n, [](float v) { return relu6(v + 3.0f) / 6.0f; }); break;
    case fb::UnaryFn_Abs: apply(x, y, n, [](float v) { return std::fabs(v); }); break;
  }
}

}  // namespace cortexm::runtime
