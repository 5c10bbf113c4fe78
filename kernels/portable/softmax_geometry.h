// Private: softmax / log_softmax view the input as [outer, n, inner] around the reduced dim.
#pragma once

#include <math.h>

#include "cortexm/portable/elementary.h"
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

// lane(in, out, n, inner, max, sum) for every lane along the reduced dim: element k of the lane
// is in[k * inner], max its largest value and sum the sum of exp(x - max) in double.
template <typename Lane>
void for_each_softmax_lane(const SoftmaxParams& p, const float* x, float* y, Lane lane) {
  const SoftmaxGeometry g = softmax_geometry(p);
  const int64_t n = g.n, inner = g.inner;
  for (int64_t o = 0; o < g.outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const float* in = x + o * n * inner + i;
      float* out = y + o * n * inner + i;
      float max = -INFINITY;
      for (int64_t k = 0; k < n; ++k) max = in[k * inner] > max ? in[k * inner] : max;
      double sum = 0.0;
      for (int64_t k = 0; k < n; ++k) sum += exp_d(in[k * inner] - max);
      lane(in, out, n, inner, max, sum);
    }
  }
}

}  // namespace cortexm::portable
