#include "binary_loop.h"

namespace cortexm::portable {

void add_f32(const BinaryParams& p, const float* lhs, const float* rhs, float* out) {
  if (p.alpha == 1.0f) {
    binary_loop(p, lhs, rhs, out, [](float a, float b) { return a + b; });
  } else {
    const float alpha = p.alpha;
    binary_loop(p, lhs, rhs, out, [alpha](float a, float b) { return a + alpha * b; });
  }
}

}  // namespace cortexm::portable
