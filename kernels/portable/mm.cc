#include "cortexm/portable/matmul.h"

namespace cortexm::portable {

void mm_f32(const MatmulParams& p, const float* a, const float* b, float* out) {
  gemm_f32(p.m, p.n, p.k, a, p.k, b, p.n, out, p.n);
}

}  // namespace cortexm::portable
