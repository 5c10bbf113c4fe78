#include <math.h>

#include "cortexm/portable/elementary.h"
#include "softmax_geometry.h"

namespace cortexm::portable {

Error softmax_prepare(const SoftmaxParams& p) {
  CORTEXM_RETURN_IF_ERROR(check_shape(p.input, "self"));
  int32_t dim = 0;
  return normalize_dim(p.dim, p.input.rank, &dim, "dim", /*allow_scalar=*/true);
}

void softmax_f32(const SoftmaxParams& p, const float* x, float* y) {
  for_each_softmax_lane(p, x, y, [](const float* in, float* out, int64_t n, int64_t inner,
                                    float max, double sum) {
    for (int64_t k = 0; k < n; ++k) out[k * inner] = static_cast<float>(exp_d(in[k * inner] - max) / sum);
  });
}

}  // namespace cortexm::portable
