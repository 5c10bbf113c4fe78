// The dims attributes of aten.mean.dim, aten.sum.dim_IntList, aten.amax / amin: dim (negative
// allowed, [] = every dim) and keepdim.
#pragma once

#include <vector>

#include "cortexm/portable/mean.h"
#include "ops/portable_call.h"

namespace cortexm::ops {

// Which dims are reduced; fails on an out-of-range or repeated dim.
inline std::vector<bool> reduced_dims(const OpArgs& args, int64_t rank) {
  const std::vector<int64_t>& dims = args.ints("dim");
  std::vector<bool> reduced(static_cast<size_t>(rank), dims.empty());
  std::vector<bool> seen(static_cast<size_t>(rank == 0 ? 1 : rank), false);
  for (int64_t d : dims) {
    const int64_t n = normalize_dim(args, "dim", d, rank);
    if (seen[n])
      args.fail("attribute 'dim' = " + shape_to_string(dims) + " names dim " + std::to_string(n) +
                " more than once");
    seen[n] = true;
    if (rank > 0) reduced[n] = true;
  }
  return reduced;
}

// The output of input 0 reduced over the node's dims, of `dtype`, contiguous, no qparams.
inline TensorInfo infer_reduction_shape(const InferContext& ctx, DType dtype) {
  const TensorInfo& in = ctx.input(0);
  portable_shape(ctx, in.shape);  // rank <= 6
  const std::vector<bool> reduced = reduced_dims(ctx, in.rank());
  const bool keepdim = ctx.b("keepdim");
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (!reduced[d])
      shape.push_back(in.shape[d]);
    else if (keepdim)
      shape.push_back(1);
  }
  return make_info(dtype, shape);
}

inline std::vector<TensorInfo> infer_reduction(const InferContext& ctx) {
  require_dtype(ctx, 0, {DType::kFloat32});
  return {infer_reduction_shape(ctx, DType::kFloat32)};
}

// The reduced dims, ascending, as a program's MeanParams.reduced.
inline std::vector<uint8_t> reduced_dim_list(const NodeContext& node) {
  const std::vector<bool> reduced = reduced_dims(node, node.input(0).rank());
  std::vector<uint8_t> dims;
  for (size_t d = 0; d < reduced.size(); ++d)
    if (reduced[d]) dims.push_back(static_cast<uint8_t>(d));
  return dims;
}

// The portable params of the node's reduction.
inline portable::MeanParams reduction_params(const KernelContext& ctx) {
  const std::vector<int64_t>& dims = ctx.ints("dim");
  portable::MeanParams params;
  params.input = portable_shape(ctx, ctx.input(0).shape());
  params.num_dims = static_cast<int32_t>(dims.size());
  for (size_t i = 0; i < dims.size() && i < portable::kMaxDims; ++i) params.dims[i] = dims[i];
  params.keepdim = ctx.b("keepdim");
  return params;
}

}  // namespace cortexm::ops
