// The row-wise cortex_m ops (softmax, log_softmax) work along `dim`, which must be innermost in the
// input's memory order so that rows are contiguous. The interpreter holds logical data: the rows
// are gathered into [rows, n] for the kernel and scattered back.
#pragma once

#include <vector>

#include "ops/cortex_m_util.h"

namespace cortexm::ops {

struct Rows {
  int64_t dim = 0;                       // normalized
  int64_t outer = 1, n = 1, inner = 1;  // logical shape = [outer, n, inner] around dim
  int32_t count() const { return static_cast<int32_t>(outer * inner); }
};

// dim normalized, innermost in memory, each extent within the kernels' int32.
inline Rows rows_along(const OpArgs& args, const TensorInfo& in) {
  const int64_t rank = in.rank();
  if (rank < 1) args.fail("input must have at least one dim");
  const int64_t dim = normalize_dim(args, "dim", args.i("dim"), rank);
  if (in.effective_dim_order().back() != dim)
    args.fail("dim " + std::to_string(dim) + " must be innermost in memory (input dim_order " +
              shape_to_string(in.effective_dim_order()) + ")");
  Rows r;
  r.dim = dim;
  for (int64_t d = 0; d < rank; ++d) (d < dim ? r.outer : d == dim ? r.n : r.inner) *= in.shape[d];
  if (r.outer * r.inner > INT32_MAX || r.n > INT32_MAX || r.outer * r.n * r.inner == 0)
    args.fail("input " + shape_to_string(in.shape) + " must be non-empty with int32 extents");
  return r;
}

inline std::vector<TensorInfo> infer_int8_rows(const InferContext& ctx,
                                               DType dtype = DType::kInt8) {
  require_dtype(ctx, 0, {dtype});
  rows_along(ctx, ctx.input(0));
  TensorInfo out = make_info(dtype, ctx.input(0).shape);
  out.dim_order = ctx.input(0).dim_order;
  return {out};
}

// Runs fn(rows_in, rows_out) on the logical tensor's rows laid out contiguously (T: the element
// type, int8_t or int16_t).
template <typename T = int8_t, typename Fn>
void run_on_rows(const Rows& r, const Tensor& input, Tensor& output, Fn&& fn) {
  std::vector<T> in(static_cast<size_t>(input.numel())), out(in.size());
  const T* x = input.data<T>();
  for (int64_t o = 0; o < r.outer; ++o)
    for (int64_t i = 0; i < r.inner; ++i)
      for (int64_t k = 0; k < r.n; ++k)
        in[static_cast<size_t>((o * r.inner + i) * r.n + k)] = x[(o * r.n + k) * r.inner + i];
  fn(in.data(), out.data());
  T* y = output.data<T>();
  for (int64_t o = 0; o < r.outer; ++o)
    for (int64_t i = 0; i < r.inner; ++i)
      for (int64_t k = 0; k < r.n; ++k)
        y[(o * r.n + k) * r.inner + i] = out[static_cast<size_t>((o * r.inner + i) * r.n + k)];
}

}  // namespace cortexm::ops
