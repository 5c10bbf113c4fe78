#include "binary_loop.h"

namespace cortexm::portable {

void div_f32(const BinaryParams& p, const float* lhs, const float* rhs, float* out) {
  binary_loop(p, lhs, rhs, out, [](float a, float b) { return a / b; });
}

}  // namespace cortexm::portable
