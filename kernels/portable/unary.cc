#include "cortexm/portable/unary.h"

namespace cortexm::portable {

Error unary_prepare(const UnaryParams& p) {
  if (p.numel < 0) return invalid("numel", p.numel, "must be >= 0");
  const int32_t op = static_cast<int32_t>(p.op);
  if (op < 0 || op > static_cast<int32_t>(UnaryOp::kMish))
    return invalid("op", op, "is not a unary op");
  return kOk;
}

void unary_f32(const UnaryParams& p, const float* in, float* out) {
  const int64_t n = p.numel;
  switch (p.op) {
    case UnaryOp::kRelu: relu_f32(in, out, n); break;
    case UnaryOp::kClamp: clamp_f32(in, out, n, p.a, p.b); break;
    case UnaryOp::kHardsigmoid: hardsigmoid_f32(in, out, n); break;
    case UnaryOp::kHardswish: hardswish_f32(in, out, n); break;
    case UnaryOp::kSigmoid: sigmoid_f32(in, out, n); break;
    case UnaryOp::kTanh: tanh_f32(in, out, n); break;
    case UnaryOp::kSilu: silu_f32(in, out, n); break;
    case UnaryOp::kGelu: gelu_f32(in, out, n); break;
    case UnaryOp::kGeluTanh: gelu_tanh_f32(in, out, n); break;
    case UnaryOp::kSqrt: sqrt_f32(in, out, n); break;
    case UnaryOp::kAbs: abs_f32(in, out, n); break;
    case UnaryOp::kPowScalar: pow_scalar_f32(in, out, n, p.a); break;
    case UnaryOp::kAddScalar: add_scalar_f32(in, out, n, p.a); break;
    case UnaryOp::kSubScalar: sub_scalar_f32(in, out, n, p.a); break;
    case UnaryOp::kMulScalar: mul_scalar_f32(in, out, n, p.a); break;
    case UnaryOp::kDivScalar: div_scalar_f32(in, out, n, p.a); break;
    case UnaryOp::kLeakyRelu: leaky_relu_f32(in, out, n, p.a); break;
    case UnaryOp::kElu: elu_f32(in, out, n, p.a, p.b, p.c); break;
    case UnaryOp::kExp: exp_f32(in, out, n); break;
    case UnaryOp::kLog: log_f32(in, out, n); break;
    case UnaryOp::kRsqrt: rsqrt_f32(in, out, n); break;
    case UnaryOp::kNeg: neg_f32(in, out, n); break;
    case UnaryOp::kReciprocal: reciprocal_f32(in, out, n); break;
    case UnaryOp::kSoftplus: softplus_f32(in, out, n, p.a, p.b); break;
    case UnaryOp::kMish: mish_f32(in, out, n); break;
  }
}

}  // namespace cortexm::portable
