// Iteration space of a binary elementwise op with numpy broadcasting, collapsed so that
// same-shape operands become one contiguous run.
#pragma once

#include <cstdint>

#include "cortexm/kernels/status.h"

namespace cortexm {

constexpr int kMaxBroadcastRank = 6;

struct BroadcastShape {
  int32_t rank = 1;
  int32_t dims[kMaxBroadcastRank] = {1, 1, 1, 1, 1, 1};      // output extents, outermost first
  int32_t lhs_strides[kMaxBroadcastRank] = {0, 0, 0, 0, 0, 0};  // element strides, 0 = broadcast
  int32_t rhs_strides[kMaxBroadcastRank] = {0, 0, 0, 0, 0, 0};

  int64_t elements() const {
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= dims[i];
    return n;
  }
};

// Numpy broadcasting of two shapes (each of rank <= kMaxBroadcastRank), collapsed.
Error make_broadcast_shape(const int64_t* lhs_dims, int lhs_rank, const int64_t* rhs_dims,
                           int rhs_rank, BroadcastShape* out);

// Calls fn(lhs_index, rhs_index, count, lhs_step, rhs_step) once per innermost run.
template <typename Fn>
inline void for_each_broadcast_run(const BroadcastShape& shape, Fn&& fn) {
  const int inner = shape.rank - 1;
  int32_t index[kMaxBroadcastRank] = {0, 0, 0, 0, 0, 0};
  int64_t lhs = 0, rhs = 0;
  const int64_t runs = shape.elements() / shape.dims[inner];
  for (int64_t r = 0; r < runs; ++r) {
    fn(lhs, rhs, shape.dims[inner], shape.lhs_strides[inner], shape.rhs_strides[inner]);
    for (int d = inner - 1; d >= 0; --d) {
      lhs += shape.lhs_strides[d];
      rhs += shape.rhs_strides[d];
      if (++index[d] < shape.dims[d]) break;
      lhs -= int64_t{shape.lhs_strides[d]} * shape.dims[d];
      rhs -= int64_t{shape.rhs_strides[d]} * shape.dims[d];
      index[d] = 0;
    }
  }
}

}  // namespace cortexm
