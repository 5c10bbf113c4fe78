#include "cortexm/portable/elementary.h"
#include "cortexm/portable/unary.h"

namespace cortexm::portable {

void tanh_f32(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float x = in[i];
    out[i] = static_cast<float>(tanh_d(x));
  }
}

}  // namespace cortexm::portable
