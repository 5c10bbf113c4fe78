// The float32 matrix product shared by linear, addmm, mm and bmm: C = A * B, row-major, summed in
// float over k in order (i-k-j loops so the inner loop over j vectorizes).
#pragma once

#include <algorithm>
#include <cstdint>

namespace cortexm::ops {

namespace gemm_detail {

// c_r[j] += a_r * b[j] for four rows at once, so each b[j] is loaded once per four rows.
inline void axpy4(int64_t n, const float* __restrict b, float a0, float a1, float a2, float a3,
                  float* __restrict c0, float* __restrict c1, float* __restrict c2,
                  float* __restrict c3) {
  for (int64_t j = 0; j < n; ++j) {
    const float bj = b[j];
    c0[j] += a0 * bj;
    c1[j] += a1 * bj;
    c2[j] += a2 * bj;
    c3[j] += a3 * bj;
  }
}

inline void axpy1(int64_t n, const float* __restrict b, float a, float* __restrict c) {
  for (int64_t j = 0; j < n; ++j) c[j] += a * b[j];
}

}  // namespace gemm_detail

// C[m, n] = sum_k A[m, k] * B[k, n]; C is overwritten. lda/ldb/ldc are row strides in elements.
// C must not overlap A or B.
inline void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                     int64_t ldb, float* c, int64_t ldc) {
  constexpr int64_t kColBlock = 512;  // columns of C per pass, so four C rows stay in L1
  for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
  for (int64_t j0 = 0; j0 < n; j0 += kColBlock) {
    const int64_t nb = std::min(kColBlock, n - j0);
    int64_t i = 0;
    for (; i + 4 <= m; i += 4) {
      const float* a0 = a + i * lda;
      float* c0 = c + i * ldc + j0;
      for (int64_t p = 0; p < k; ++p)
        gemm_detail::axpy4(nb, b + p * ldb + j0, a0[p], a0[lda + p], a0[2 * lda + p],
                           a0[3 * lda + p], c0, c0 + ldc, c0 + 2 * ldc, c0 + 3 * ldc);
    }
    for (; i < m; ++i) {
      const float* ai = a + i * lda;
      float* ci = c + i * ldc + j0;
      for (int64_t p = 0; p < k; ++p) gemm_detail::axpy1(nb, b + p * ldb + j0, ai[p], ci);
    }
  }
}

}  // namespace cortexm::ops
