#include <math.h>

#include "cortexm/portable/elementary.h"
#include "softmax_geometry.h"

namespace cortexm::portable {

void log_softmax_f32(const SoftmaxParams& p, const float* x, float* y) {
  for_each_softmax_lane(p, x, y, [](const float* in, float* out, int64_t n, int64_t inner,
                                    float max, double sum) {
    const double log_sum = log_d(sum);
    for (int64_t k = 0; k < n; ++k) out[k * inner] = static_cast<float>((in[k * inner] - max) - log_sum);
  });
}

}  // namespace cortexm::portable
