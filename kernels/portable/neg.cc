#include "cortexm/portable/unary.h"

namespace cortexm::portable {

void neg_f32(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = -in[i];
}

}  // namespace cortexm::portable
