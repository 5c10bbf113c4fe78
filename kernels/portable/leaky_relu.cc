#include "cortexm/portable/unary.h"

namespace cortexm::portable {

void leaky_relu_f32(const float* in, float* out, int64_t n, float slope) {
  for (int64_t i = 0; i < n; ++i) {
    const float x = in[i];
    out[i] = x > 0 ? x : x * slope;
  }
}

}  // namespace cortexm::portable
