#include "cortexm/portable/unary.h"

namespace cortexm::portable {

void clamp_f32(const float* in, float* out, int64_t n, float lo, float hi) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = in[i] < lo ? lo : in[i];
    out[i] = v > hi ? hi : v;
  }
}

}  // namespace cortexm::portable
