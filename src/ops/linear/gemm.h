// The float32 matrix product shared by linear, addmm, mm and bmm now lives in the portable kernels
// (cortexm/portable/matmul.h), so the interpreter and the runtime share it; this forwards to it.
#pragma once

#include <cstdint>

#include "cortexm/portable/matmul.h"

namespace cortexm::ops {

// C[m, n] = sum_k A[m, k] * B[k, n]; C is overwritten. lda/ldb/ldc are row strides in elements.
inline void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                     int64_t ldb, float* c, int64_t ldc) {
  portable::gemm_f32(m, n, k, a, lda, b, ldb, c, ldc);
}

}  // namespace cortexm::ops
