#include "cortexm/portable/matmul.h"

namespace cortexm::portable {

Error addmm_prepare(const AddmmParams& p) {
  MatmulParams mm;
  mm.m = p.m, mm.k = p.k, mm.n = p.n;
  CORTEXM_RETURN_IF_ERROR(matmul_prepare(mm));
  CORTEXM_RETURN_IF_ERROR(check_shape(p.self, "self"));
  if (p.self.rank > 2) return invalid("self.rank", p.self.rank, "must be <= 2");
  const int64_t out[2] = {p.m, p.n};
  for (int i = 0; i < p.self.rank; ++i) {
    const int64_t d = p.self.dims[p.self.rank - 1 - i];
    if (d != 1 && d != out[1 - i])
      return invalid("self.shape", d, "does not broadcast to [m, n]", p.self.rank - 1 - i);
  }
  return kOk;
}

void addmm_f32(const AddmmParams& p, const float* self, const float* mat1, const float* mat2,
               float* y) {
  gemm_f32(p.m, p.n, p.k, mat1, p.k, mat2, p.n, y, p.n);
  const int64_t count = p.m * p.n;
  if (p.alpha != 1.0f)
    for (int64_t i = 0; i < count; ++i) y[i] *= p.alpha;
  if (p.beta == 0.0f) return;
  // self broadcast to [m, n]: a row stride and a column stride, 0 along broadcast dims.
  const int r = p.self.rank;
  const int64_t cols = r >= 1 ? p.self.dims[r - 1] : 1;
  const int64_t rows = r >= 2 ? p.self.dims[r - 2] : 1;
  const int64_t col_stride = cols == 1 ? 0 : 1;
  const int64_t row_stride = rows == 1 ? 0 : cols;
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) y[i * p.n + j] += p.beta * self[i * row_stride + j * col_stride];
}

}  // namespace cortexm::portable
