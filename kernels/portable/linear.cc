#include "cortexm/portable/matmul.h"

namespace cortexm::portable {

Error linear_prepare(const LinearParams& p) {
  MatmulParams mm;
  mm.m = p.m, mm.k = p.k, mm.n = p.n;
  return matmul_prepare(mm);
}

int64_t linear_scratch_bytes(const LinearParams& p) {
  return p.k * p.n * static_cast<int64_t>(sizeof(float));
}

// Dot products against weight rows give, element by element, the same float sums as the gemm
// of the transposed weight (0, then + a[p] * w[p] for p ascending), so scratch only buys speed.
void linear_f32(const LinearParams& p, const float* input, const float* weight, const float* bias,
                float* out, float* scratch) {
  const int64_t k = p.k, n = p.n;
  if (scratch != nullptr) {
    for (int64_t j = 0; j < n; ++j)
      for (int64_t q = 0; q < k; ++q) scratch[q * n + j] = weight[j * k + q];
    gemm_f32(p.m, n, k, input, k, scratch, n, out, n);
    if (bias)
      for (int64_t i = 0; i < p.m; ++i)
        for (int64_t j = 0; j < n; ++j) out[i * n + j] += bias[j];
    return;
  }
  for (int64_t i = 0; i < p.m; ++i) {
    const float* a = input + i * k;
    float* o = out + i * n;
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) {
      const float* w0 = weight + j * k;
      const float* w1 = w0 + k;
      const float* w2 = w1 + k;
      const float* w3 = w2 + k;
      float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
      for (int64_t q = 0; q < k; ++q) {
        const float aq = a[q];
        s0 += aq * w0[q];
        s1 += aq * w1[q];
        s2 += aq * w2[q];
        s3 += aq * w3[q];
      }
      o[j] = s0, o[j + 1] = s1, o[j + 2] = s2, o[j + 3] = s3;
    }
    for (; j < n; ++j) {
      const float* w = weight + j * k;
      float s = 0.0f;
      for (int64_t q = 0; q < k; ++q) s += a[q] * w[q];
      o[j] = s;
    }
    if (bias)
      for (int64_t jj = 0; jj < n; ++jj) o[jj] += bias[jj];
  }
}

}  // namespace cortexm::portable
