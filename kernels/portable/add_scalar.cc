#include <math.h>

#include "cortexm/portable/unary.h"

namespace cortexm::portable {

void add_scalar_f32(const float* in, float* out, int64_t n, float c) {
  for (int64_t i = 0; i < n; ++i) {
    const float x = in[i];
    out[i] = x + c;
  }
}

}  // namespace cortexm::portable

namespace cortexm::portable {

float scalar_times_alpha(double other, double alpha) {
  return static_cast<float>(alpha) * static_cast<float>(other);
}

}  // namespace cortexm::portable
