#include "binary_loop.h"

namespace cortexm::portable {

void maximum_f32(const BinaryParams& p, const float* lhs, const float* rhs, float* out) {
  binary_loop(p, lhs, rhs, out, [](float a, float b) {
    if (a != a) return a;
    if (b != b) return b;
    return a > b ? a : b;
  });
}

}  // namespace cortexm::portable
