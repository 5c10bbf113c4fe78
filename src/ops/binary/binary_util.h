// Broadcast iteration space of a cortex_m binary op from its inputs' logical shapes.
#pragma once

#include "cortexm/kernels/broadcast.h"
#include "graph/layout.h"
#include "ops/cortex_m_util.h"

namespace cortexm::ops {

inline BroadcastShape broadcast_of(const OpArgs& args, const TensorInfo& a, const TensorInfo& b) {
  BroadcastShape shape;
  check_kernel(args, make_broadcast_shape(a.shape.data(), static_cast<int>(a.rank()), b.shape.data(),
                                          static_cast<int>(b.rank()), &shape));
  return shape;
}

// Both inputs and the output of `dtype` (int8, or int16 for the _s16 ops).
inline std::vector<TensorInfo> infer_binary(const InferContext& ctx, DType dtype) {
  require_dtype(ctx, 0, {dtype});
  require_dtype(ctx, 1, {dtype});
  broadcast_of(ctx, ctx.input(0), ctx.input(1));
  TensorInfo out = make_info(dtype, broadcast_shapes(ctx, ctx.input(0).shape, ctx.input(1).shape));
  // Same-shape operands keep their memory layout, and so do broadcasting ones of one rank in one
  // dim order (the runtime broadcasts over their physical shapes); others are planned contiguous.
  const TensorInfo& a = ctx.input(0);
  const TensorInfo& b = ctx.input(1);
  if (a.shape == b.shape) {
    out.dim_order = a.effective_dim_order();
  } else if (a.rank() == b.rank() && a.effective_dim_order() == b.effective_dim_order()) {
    out.dim_order = a.effective_dim_order();
  } else {
    out.dim_order = contiguous_dim_order(out.shape.size());
  }
  return {out};
}

inline std::vector<TensorInfo> infer_int8_binary(const InferContext& ctx) {
  return infer_binary(ctx, DType::kInt8);
}

}  // namespace cortexm::ops
