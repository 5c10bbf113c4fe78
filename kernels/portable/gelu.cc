#include "cortexm/portable/elementary.h"
#include "cortexm/portable/unary.h"

namespace cortexm::portable {

void gelu_f32(const float* in, float* out, int64_t n) {
  const double inv_sqrt2 = 0.70710678118654752440;  // M_SQRT1_2
  for (int64_t i = 0; i < n; ++i) {
    const double x = in[i];
    out[i] = static_cast<float>(x * 0.5 * (1.0 + erf_d(x * inv_sqrt2)));
  }
}

void gelu_tanh_f32(const float* in, float* out, int64_t n) {
  const double beta = 0.79788456080286535588;  // sqrt(2 / pi)
  const double kappa = 0.044715;
  for (int64_t i = 0; i < n; ++i) {
    const double x = in[i];
    out[i] = static_cast<float>(0.5 * x * (1.0 + tanh_d(beta * (x + kappa * x * x * x))));
  }
}

}  // namespace cortexm::portable
