#include "cortexm/portable/matmul.h"

namespace cortexm::portable {

namespace {

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

}  // namespace

void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
              int64_t ldb, float* c, int64_t ldc) {
  constexpr int64_t kColBlock = 512;  // columns of C per pass, so four C rows stay in cache
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = 0.0f;
  for (int64_t j0 = 0; j0 < n; j0 += kColBlock) {
    const int64_t nb = n - j0 < kColBlock ? n - j0 : kColBlock;
    int64_t i = 0;
    for (; i + 4 <= m; i += 4) {
      const float* a0 = a + i * lda;
      float* c0 = c + i * ldc + j0;
      for (int64_t p = 0; p < k; ++p)
        axpy4(nb, b + p * ldb + j0, a0[p], a0[lda + p], a0[2 * lda + p], a0[3 * lda + p], c0,
              c0 + ldc, c0 + 2 * ldc, c0 + 3 * ldc);
    }
    for (; i < m; ++i) {
      const float* ai = a + i * lda;
      float* ci = c + i * ldc + j0;
      for (int64_t p = 0; p < k; ++p) axpy1(nb, b + p * ldb + j0, ai[p], ci);
    }
  }
}

Error matmul_prepare(const MatmulParams& p) {
  constexpr int64_t kLimit = int64_t{1} << 31;
  if (p.batch < 0 || p.batch > kLimit) return invalid("batch", p.batch, "must be in [0, 2^31]");
  if (p.m < 0 || p.m > kLimit) return invalid("m", p.m, "must be in [0, 2^31]");
  if (p.k < 0 || p.k > kLimit) return invalid("k", p.k, "must be in [0, 2^31]");
  if (p.n < 0 || p.n > kLimit) return invalid("n", p.n, "must be in [0, 2^31]");
  return kOk;
}

}  // namespace cortexm::portable
