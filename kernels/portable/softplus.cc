#include "cortexm/portable/elementary.h"
#include "cortexm/portable/unary.h"

namespace cortexm::portable {

namespace {

double softplus_d(float x, float beta, float threshold) {
  const float scaled = x * beta;
  if (scaled > threshold) return x;
  return log1p_d(exp_d(scaled)) / beta;
}

}  // namespace

void softplus_f32(const float* in, float* out, int64_t n, float beta, float threshold) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(softplus_d(in[i], beta, threshold));
}

void mish_f32(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float x = in[i];
    out[i] = static_cast<float>(x * tanh_d(log1p_d(exp_d(x))));
  }
}

}  // namespace cortexm::portable
