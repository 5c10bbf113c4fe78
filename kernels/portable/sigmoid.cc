#include <math.h>

#include "cortexm/portable/unary.h"

namespace cortexm::portable {

void sigmoid_f32(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float x = in[i];
    out[i] = 1.0f / (1.0f + expf(-x));
  }
}

}  // namespace cortexm::portable
