// Shared pieces of op registrations: inference helpers, dtype checks, elementwise loops.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "graph/errors.h"
#include "graph/layout.h"
#include "graph/op_schema.h"

namespace cortexm::ops {

inline TensorInfo make_info(DType dtype, std::vector<int64_t> shape) {
  TensorInfo info;
  info.dtype = dtype;
  info.shape = std::move(shape);
  return info;
}

// Fails unless input i has one of the dtypes: "input 0 (self) is int8[1, 3], expected float32".
void require_dtype(const InferContext& ctx, size_t i, std::initializer_list<DType> dtypes);
void require_rank(const InferContext& ctx, size_t i, std::initializer_list<int64_t> ranks);

// dim in [-rank, rank) -> [0, rank); fails naming the attribute otherwise.
int64_t normalize_dim(const OpArgs& args, const std::string& attr, int64_t dim, int64_t rank);

// Numpy broadcasting of two shapes; fails naming both.
std::vector<int64_t> broadcast_shapes(const OpArgs& args, const std::vector<int64_t>& a,
                                      const std::vector<int64_t>& b);

// Per-tensor qparams travel through data movement; per-channel ones do not.
inline std::optional<QuantParams> passthrough_qparams(const TensorInfo& info) {
  if (info.qparams && !info.qparams->per_channel()) return info.qparams;
  return std::nullopt;
}

// A data-movement op's output info: `in`'s dtype and per-tensor qparams, `shape`, contiguous.
inline TensorInfo moved_info(const TensorInfo& in, std::vector<int64_t> shape) {
  TensorInfo out = make_info(in.dtype, std::move(shape));
  out.qparams = passthrough_qparams(in);
  return out;
}

// A view's output info: moved_info with the dim order that keeps the bytes in place when there is
// one (graph/layout.h), else contiguous. The order is always explicit, so re-inference after the
// input's order changed cannot keep a stale one.
inline TensorInfo view_info(const TensorInfo& in, std::vector<int64_t> shape) {
  TensorInfo out = moved_info(in, std::move(shape));
  out.dim_order = view_dim_order(in, out.shape).value_or(contiguous_dim_order(out.shape.size()));
  return out;
}

// Output info equal to input 0's dtype and shape (no qparams, contiguous).
std::vector<TensorInfo> same_as_input(const InferContext& ctx);

}  // namespace cortexm::ops
