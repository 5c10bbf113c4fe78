// Where a value's elements lie in memory, and which views leave them where they are.
//
// A view (view_copy, squeeze, unsqueeze) of a contiguous value is contiguous and may alias its
// input. A view of a value in another dim order keeps the bytes in place only when it just inserts
// or removes size-1 dims: its output then has the input's physical order (view_dim_order), and the
// planner, the program writer and the runtime alias it like a contiguous view (same_bytes).
#pragma once

#include <optional>
#include <vector>

#include "graph/tensor.h"

namespace cortexm {

// [0, 1, ..., rank - 1].
std::vector<int64_t> contiguous_dim_order(size_t rank);

// The dim order of a view of `in` to `shape` that keeps every element at its byte offset: the
// identity for a contiguous input; for another order, when the view only inserts or removes size-1
// dims, the input's physical order of the remaining dims, each size-1 dim placed before the first
// later dim in that order; nullopt otherwise (the view copies into a contiguous output).
std::optional<std::vector<int64_t>> view_dim_order(const TensorInfo& in,
                                                   const std::vector<int64_t>& shape);

// Element strides of `shape` laid out in `dim_order` (empty: contiguous).
std::vector<int64_t> layout_strides(const std::vector<int64_t>& shape,
                                    const std::vector<int64_t>& dim_order);

// Whether a and b put the n-th element (in logical row-major order) at the same byte offset:
// same dtype and numel, and the same (extent, stride) runs over their non-size-1 dims once adjacent
// dims that step over each other exactly are merged (so every contiguous layout is one run). A
// view between them needs no data movement.
bool same_bytes(const TensorInfo& a, const TensorInfo& b);

// Whether permute_copy(in, dims) (output dim i = input dim dims[i]) into `out`'s dim order leaves
// every element at its byte offset (NHWC data as NCHW in channels-last order): the planner then
// aliases it, like a view that keeps the bytes.
bool permute_keeps_bytes(const TensorInfo& in, const TensorInfo& out, const std::vector<int64_t>& dims);

}  // namespace cortexm
