#include "cortexm/portable/elementary.h"
#include "cortexm/portable/unary.h"

namespace cortexm::portable {

void elu_f32(const float* in, float* out, int64_t n, float alpha, float scale, float input_scale) {
  const double negative_coefficient = alpha * scale;  // float32 product, as torch
  for (int64_t i = 0; i < n; ++i) {
    const float x = in[i];
    out[i] = x > 0 ? x * scale
                   : static_cast<float>(expm1_d(static_cast<double>(x) * input_scale) *
                                        negative_coefficient);
  }
}

}  // namespace cortexm::portable
