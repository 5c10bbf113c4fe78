#include "cortexm/portable/unary.h"

namespace cortexm::portable {

void hardswish_f32(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float x = in[i];
    const float r = x + 3.0f;
    out[i] = x * (r < 0.0f ? 0.0f : (r > 6.0f ? 6.0f : r)) / 6.0f;
  }
}

}  // namespace cortexm::portable
