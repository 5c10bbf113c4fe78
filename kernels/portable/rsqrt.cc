#include <math.h>

#include "cortexm/portable/unary.h"

namespace cortexm::portable {

void rsqrt_f32(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(1.0 / sqrt(static_cast<double>(in[i])));
}

}  // namespace cortexm::portable
