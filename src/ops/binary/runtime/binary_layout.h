// Iteration space of an int8 (or int16) binary op over the elements of its operands. Same-shape operands with
// one layout run as one flat run (whatever the dim order); broadcasting operands must be contiguous,
// or all three of one rank laid out in the output's dim order (channels-last [N, C, H, W] times
// [N, C, 1, 1], say): they then broadcast over their physical shapes, outermost first.
#pragma once

#include "cortexm/kernels/broadcast.h"
#include "runtime/op_context.h"

namespace cortexm::runtime {

// The dims of `t` outermost first: its extent-1 dims (where they go does not matter), then the
// others by decreasing stride. False when its strides are not those of that order.
inline bool memory_order(const TensorView& t, int64_t* order) {
  int32_t n = 0;
  for (int32_t d = 0; d < t.rank; ++d)
    if (t.shape[d] == 1) order[n++] = d;
  const int32_t first = n;
  for (int32_t d = 0; d < t.rank; ++d) {
    if (t.shape[d] == 1) continue;
    int32_t k = n++;
    for (; k > first && t.strides[order[k - 1]] < t.strides[d]; --k) order[k] = order[k - 1];
    order[k] = d;
  }
  return t.has_layout(order);
}

// Both inputs and the output must be of `dtype`.
inline Status binary_shape(const OpContext& ctx, BroadcastShape* shape, DType dtype = DType::kInt8) {
  const TensorView lhs = ctx.input(0), rhs = ctx.input(1), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "self", lhs, dtype));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "other", rhs, dtype));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "output", out, dtype));
  if (lhs.same_layout(rhs) && lhs.same_layout(out)) {
    const int64_t n = lhs.numel();
    const Error e = make_broadcast_shape(&n, 1, &n, 1, shape);
    return e.ok() ? kStatusOk : ctx.fail(e);
  }
  int64_t order[kMaxRank];
  if (lhs.is_contiguous() && rhs.is_contiguous() && out.is_contiguous()) {
    const Error e = make_broadcast_shape(lhs.shape, lhs.rank, rhs.shape, rhs.rank, shape);
    if (!e.ok()) return ctx.fail(e);
  } else if (lhs.rank == out.rank && rhs.rank == out.rank && memory_order(out, order) &&
             lhs.has_layout(order) && rhs.has_layout(order)) {
    int64_t l[kMaxRank], r[kMaxRank];
    for (int32_t k = 0; k < out.rank; ++k) {
      l[k] = lhs.shape[order[k]];
      r[k] = rhs.shape[order[k]];
    }
    const Error e = make_broadcast_shape(l, out.rank, r, out.rank, shape);
    if (!e.ok()) return ctx.fail(e);
  } else {
    return ctx.unsupported("self", 0, "broadcasting operands must be contiguous or share the output's dim order");
  }
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
