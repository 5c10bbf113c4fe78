#include "cortexm/portable/elementary.h"
#include "cortexm/portable/unary.h"

namespace cortexm::portable {

void pow_scalar_f32(const float* in, float* out, int64_t n, float exponent) {
  if (exponent == 2.0f) {
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] * in[i];
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(pow_d(in[i], exponent));
  }
}

}  // namespace cortexm::portable
