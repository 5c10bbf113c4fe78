#include "cortexm/portable/matmul.h"

namespace cortexm::portable {

void bmm_f32(const MatmulParams& p, const float* a, const float* b, float* out) {
  for (int64_t i = 0; i < p.batch; ++i)
    gemm_f32(p.m, p.n, p.k, a + i * p.m * p.k, p.k, b + i * p.k * p.n, p.n, out + i * p.m * p.n,
             p.n);
}

}  // namespace cortexm::portable
