#include <math.h>

#include "cortexm/portable/unary.h"

namespace cortexm::portable {

void gelu_f32(const float* in, float* out, int64_t n) {
  const float inv_sqrt2 = static_cast<float>(0.70710678118654752440);  // M_SQRT1_2
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] * 0.5f * (1.0f + erff(in[i] * inv_sqrt2));
}

void gelu_tanh_f32(const float* in, float* out, int64_t n) {
  const float beta = static_cast<float>(sqrt(2.0 / 3.14159265358979323846));  // sqrt(2 / M_PI)
  const float kappa = 0.044715f;
  for (int64_t i = 0; i < n; ++i) {
    const float x = in[i];
    out[i] = 0.5f * x * (1.0f + tanhf(beta * (x + kappa * x * x * x)));
  }
}

}  // namespace cortexm::portable
