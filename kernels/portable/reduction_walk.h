// The walk of a reduction over MeanParams' dims: for each output element, row-major over the kept
// dims, the offsets of its reduced elements, row-major over the reduced dims (contiguous input).
#pragma once

#include "cortexm/portable/mean.h"

namespace cortexm::portable {

// begin(o) starts output o; visit(offset) takes one reduced element and returns false to skip
// the rest of them; end(o) finishes output o.
template <typename Begin, typename Visit, typename End>
void walk_reduction(const MeanParams& p, Begin begin, Visit visit, End end) {
  bool reduced[kMaxDims];
  for (int d = 0; d < p.input.rank; ++d) reduced[d] = p.num_dims == 0;
  for (int i = 0; i < p.num_dims && p.input.rank > 0; ++i)
    reduced[p.dims[i] < 0 ? p.dims[i] + p.input.rank : p.dims[i]] = true;
  int64_t strides[kMaxDims];
  int64_t s = 1;
  for (int d = p.input.rank - 1; d >= 0; --d) {
    strides[d] = s;
    s *= p.input.dims[d];
  }
  int64_t kept_dims[kMaxDims], kept_strides[kMaxDims], red_dims[kMaxDims], red_strides[kMaxDims];
  int kept = 0, red = 0;
  int64_t outputs = 1, count = 1;
  for (int d = 0; d < p.input.rank; ++d) {
    if (reduced[d]) {
      red_dims[red] = p.input.dims[d];
      red_strides[red++] = strides[d];
      count *= p.input.dims[d];
    } else {
      kept_dims[kept] = p.input.dims[d];
      kept_strides[kept++] = strides[d];
      outputs *= p.input.dims[d];
    }
  }
  int64_t kept_index[kMaxDims] = {0, 0, 0, 0, 0, 0};
  int64_t base = 0;
  for (int64_t o = 0; o < outputs; ++o) {
    begin(o);
    int64_t red_index[kMaxDims] = {0, 0, 0, 0, 0, 0};
    int64_t offset = 0;
    for (int64_t r = 0; r < count; ++r) {
      if (!visit(base + offset)) break;
      for (int d = red - 1; d >= 0; --d) {
        offset += red_strides[d];
        if (++red_index[d] < red_dims[d]) break;
        offset -= red_strides[d] * red_dims[d];
        red_index[d] = 0;
      }
    }
    end(o);
    for (int d = kept - 1; d >= 0; --d) {
      base += kept_strides[d];
      if (++kept_index[d] < kept_dims[d]) break;
      base -= kept_strides[d] * kept_dims[d];
      kept_index[d] = 0;
    }
  }
}

}  // namespace cortexm::portable
