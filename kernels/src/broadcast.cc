#include "cortexm/kernels/broadcast.h"

namespace cortexm {

Error make_broadcast_shape(const int64_t* lhs_dims, int lhs_rank, const int64_t* rhs_dims,
                           int rhs_rank, BroadcastShape* out) {
  if (lhs_rank < 0 || lhs_rank > kMaxBroadcastRank)
    return invalid("self.ndim", lhs_rank, "must be in [0, 6]");
  if (rhs_rank < 0 || rhs_rank > kMaxBroadcastRank)
    return invalid("other.ndim", rhs_rank, "must be in [0, 6]");
  const int rank = lhs_rank > rhs_rank ? lhs_rank : rhs_rank;
  int64_t dims[kMaxBroadcastRank], lhs_ext[kMaxBroadcastRank], rhs_ext[kMaxBroadcastRank];
  for (int i = 0; i < rank; ++i) {
    const int li = i - (rank - lhs_rank), ri = i - (rank - rhs_rank);
    lhs_ext[i] = li >= 0 ? lhs_dims[li] : 1;
    rhs_ext[i] = ri >= 0 ? rhs_dims[ri] : 1;
    if (lhs_ext[i] < 1) return invalid("self.shape", lhs_ext[i], "must be >= 1", li);
    if (rhs_ext[i] < 1) return invalid("other.shape", rhs_ext[i], "must be >= 1", ri);
    if (lhs_ext[i] != rhs_ext[i] && lhs_ext[i] != 1 && rhs_ext[i] != 1)
      return invalid("other.shape", rhs_ext[i], "does not broadcast against self", ri);
    dims[i] = lhs_ext[i] > rhs_ext[i] ? lhs_ext[i] : rhs_ext[i];
    if (dims[i] > INT32_MAX) return invalid("self.shape", dims[i], "is too large", li);
  }
  // Contiguous strides, 0 where broadcast; then merge adjacent dims that iterate as one.
  int64_t lhs_strides[kMaxBroadcastRank], rhs_strides[kMaxBroadcastRank];
  int64_t ls = 1, rs = 1;
  for (int i = rank - 1; i >= 0; --i) {
    lhs_strides[i] = lhs_ext[i] == 1 ? 0 : ls;
    rhs_strides[i] = rhs_ext[i] == 1 ? 0 : rs;
    ls *= lhs_ext[i];
    rs *= rhs_ext[i];
  }
  BroadcastShape s;
  s.rank = 0;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] == 1) continue;
    if (s.rank > 0) {
      const int j = s.rank - 1;
      const bool lhs_merges = s.lhs_strides[j] == lhs_strides[i] * dims[i];
      const bool rhs_merges = s.rhs_strides[j] == rhs_strides[i] * dims[i];
      if (lhs_merges && rhs_merges) {
        if (int64_t{s.dims[j]} * dims[i] > INT32_MAX)
          return invalid("self.numel", int64_t{s.dims[j]} * dims[i], "is too large");
        s.dims[j] = static_cast<int32_t>(s.dims[j] * dims[i]);
        s.lhs_strides[j] = static_cast<int32_t>(lhs_strides[i]);
        s.rhs_strides[j] = static_cast<int32_t>(rhs_strides[i]);
        continue;
      }
    }
    s.dims[s.rank] = static_cast<int32_t>(dims[i]);
    s.lhs_strides[s.rank] = static_cast<int32_t>(lhs_strides[i]);
    s.rhs_strides[s.rank] = static_cast<int32_t>(rhs_strides[i]);
    ++s.rank;
  }
  if (s.rank == 0) {
    s.rank = 1;
    s.dims[0] = 1;
    s.lhs_strides[0] = 0;
    s.rhs_strides[0] = 0;
  }
  if (s.elements() > INT32_MAX) return invalid("self.numel", s.elements(), "is too large");
  *out = s;
  return kOk;
}

}  // namespace cortexm
