#include "cortexm/portable/elementary.h"
#include "cortexm/portable/unary.h"

namespace cortexm::portable {

void log_f32(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(log_d(in[i]));
}

}  // namespace cortexm::portable
