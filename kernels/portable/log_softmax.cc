#include <math.h>

#include "cortexm/portable/elementary.h"
#include "softmax_geometry.h"

namespace cortexm::portable {

void log_softmax_f32(const SoftmaxParams& p, const float* x, float* y) {
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
      const double log_sum = log_d(sum);
      for (int64_t k = 0; k < n; ++k) out[k * inner] = static_cast<float>((in[k * inner] - max) - log_sum);
    }
  }
}

}  // namespace cortexm::portable
