// Iteration space of an int8 binary op over the bytes of its operands. Same-shape operands with
// one layout run as one flat run (whatever the dim order); broadcasting operands must be contiguous.
#pragma once

#include "cortexm/kernels/broadcast.h"
#include "runtime/op_context.h"

namespace cortexm::runtime {

inline Status binary_shape(const OpContext& ctx, BroadcastShape* shape) {
  const TensorView lhs = ctx.input(0), rhs = ctx.input(1), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "self", lhs, DType::kInt8));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "other", rhs, DType::kInt8));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "output", out, DType::kInt8));
  if (lhs.same_layout(rhs) && lhs.same_layout(out)) {
    const int64_t n = lhs.numel();
    const Error e = make_broadcast_shape(&n, 1, &n, 1, shape);
    return e.ok() ? kStatusOk : ctx.fail(e);
  }
  if (!lhs.is_contiguous() || !rhs.is_contiguous() || !out.is_contiguous())
    return ctx.unsupported("self", 0, "broadcasting operands must be contiguous");
  const Error e = make_broadcast_shape(lhs.shape, lhs.rank, rhs.shape, rhs.rank, shape);
  if (!e.ok()) return ctx.fail(e);
  // The output is the broadcast shape.
  const int32_t rank = lhs.rank > rhs.rank ? lhs.rank : rhs.rank;
  if (out.rank != rank) return ctx.fail("output.rank", out.rank, "must be the broadcast rank");
  for (int32_t i = 0; i < rank; ++i) {
    const int32_t li = i - (rank - lhs.rank), ri = i - (rank - rhs.rank);
    const int64_t l = li >= 0 ? lhs.shape[li] : 1, r = ri >= 0 ? rhs.shape[ri] : 1;
    if (out.shape[i] != (l > r ? l : r))
      return ctx.fail("output.shape", out.shape[i], "must be the broadcast shape", i);
  }
  return kStatusOk;
}

}  // namespace cortexm::runtime
