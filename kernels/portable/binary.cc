#include "cortexm/portable/binary.h"

namespace cortexm::portable {

Error binary_prepare(const Shape& lhs, const Shape& rhs, BinaryParams* params, Shape* output) {
  CORTEXM_RETURN_IF_ERROR(check_shape(lhs, "self"));
  CORTEXM_RETURN_IF_ERROR(check_shape(rhs, "other"));
  const int32_t op = static_cast<int32_t>(params->op);
  if (op < 0 || op > static_cast<int32_t>(BinaryOp::kMaximum))
    return invalid("op", op, "is not a binary op");
  Shape out;
  out.rank = lhs.rank > rhs.rank ? lhs.rank : rhs.rank;
  for (int i = 0; i < out.rank; ++i) {
    const int li = i - (out.rank - lhs.rank), ri = i - (out.rank - rhs.rank);
    const int64_t a = li >= 0 ? lhs.dims[li] : 1, b = ri >= 0 ? rhs.dims[ri] : 1;
    if (a != b && a != 1 && b != 1) return invalid("other.shape", b, "does not broadcast against self", ri);
    out.dims[i] = a == 1 ? b : a;
  }
  params->empty = out.numel() == 0;
  if (!params->empty) {
    CORTEXM_RETURN_IF_ERROR(
        make_broadcast_shape(lhs.dims, lhs.rank, rhs.dims, rhs.rank, &params->shape));
  }
  if (output) *output = out;
  return kOk;
}

void binary_f32(const BinaryParams& p, const float* lhs, const float* rhs, float* out) {
  switch (p.op) {
    case BinaryOp::kAdd: add_f32(p, lhs, rhs, out); break;
    case BinaryOp::kSub: sub_f32(p, lhs, rhs, out); break;
    case BinaryOp::kMul: mul_f32(p, lhs, rhs, out); break;
    case BinaryOp::kDiv: div_f32(p, lhs, rhs, out); break;
    case BinaryOp::kMinimum: minimum_f32(p, lhs, rhs, out); break;
    case BinaryOp::kMaximum: maximum_f32(p, lhs, rhs, out); break;
  }
}

}  // namespace cortexm::portable
