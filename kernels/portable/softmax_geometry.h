// Private: softmax / log_softmax view the input as [outer, n, inner] around the reduced dim.
#pragma once

#include "cortexm/portable/softmax.h"

namespace cortexm::portable {

struct SoftmaxGeometry {
  int64_t outer = 1, n = 1, inner = 1;
};

inline SoftmaxGeometry softmax_geometry(const SoftmaxParams& p) {
  const int64_t rank = p.input.rank;
  const int64_t dim = rank == 0 ? 0 : (p.dim < 0 ? p.dim + rank : p.dim);
  SoftmaxGeometry g;
  for (int64_t d = 0; d < rank; ++d) (d < dim ? g.outer : d == dim ? g.n : g.inner) *= p.input.dims[d];
  return g;
}

}  // namespace cortexm::portable
