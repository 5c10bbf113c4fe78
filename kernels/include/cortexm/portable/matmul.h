// Float32 matrix products (aten.mm, aten.bmm, aten.addmm, aten.linear), row-major. Every output
// element is summed in float from 0 over k in ascending order (c += a * b, no FMA), so blocking
// and vectorization never change a result.
#pragma once

#include <cstdint>

#include "cortexm/portable/shape.h"

namespace cortexm::portable {

// C[m, n] = sum_k A[m, k] * B[k, n]; C is overwritten and must not overlap A or B. lda, ldb, ldc
// are row strides in elements.
void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
              int64_t ldb, float* c, int64_t ldc);

struct MatmulParams {
  int64_t batch = 1;  // bmm: batch count; mm: 1
  int64_t m = 0, k = 0, n = 0;
};

Error matmul_prepare(const MatmulParams& params);

// aten.mm: [M, K] @ [K, N] -> [M, N].
void mm_f32(const MatmulParams& params, const float* a, const float* b, float* out);
// aten.bmm: [B, M, K] @ [B, K, N] -> [B, M, N].
void bmm_f32(const MatmulParams& params, const float* a, const float* b, float* out);

// aten.addmm: beta * self + alpha * (mat1 @ mat2). The product is scaled by alpha when
// alpha != 1, then beta * self (broadcast to [M, N]) is added unless beta == 0 (self ignored).
struct AddmmParams {
  int64_t m = 0, k = 0, n = 0;
  Shape self;  // rank <= 2, broadcasts to [m, n]
  float alpha = 1.0f;
  float beta = 1.0f;
};

Error addmm_prepare(const AddmmParams& params);
void addmm_f32(const AddmmParams& params, const float* self, const float* mat1, const float* mat2,
               float* out);

// aten.linear: input [..., K] @ weight[N, K]^T (+ bias[N]) -> [..., N]; the bias is added to the
// finished sum.
struct LinearParams {
  int64_t m = 0;  // product of the input's leading dims
  int64_t k = 0, n = 0;
};

Error linear_prepare(const LinearParams& params);

// Bytes of optional scratch that let linear_f32 run as a gemm of the transposed weight (the
// interpreter's loop order before these kernels); the results are the same with or without it.
int64_t linear_scratch_bytes(const LinearParams& params);

// bias may be null; scratch may be null or hold linear_scratch_bytes (float aligned).
void linear_f32(const LinearParams& params, const float* input, const float* weight,
                const float* bias, float* out, float* scratch = nullptr);

}  // namespace cortexm::portable
