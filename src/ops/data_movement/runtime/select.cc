// Select: input[..., index, ...] along dim, which the output drops.
#include "cortexm/portable/select.h"

#include "runtime/ops/portable_layout.h"

namespace cortexm::runtime {

namespace {

TensorView selected_input(const OpContext& ctx, int32_t dim, int64_t index) {
  const TensorView in = ctx.input(0);
  TensorView v;
  v.dtype = in.dtype;
  v.rank = in.rank - 1;
  for (int32_t d = 0, k = 0; d < in.rank; ++d) {
    if (d == dim) continue;
    v.shape[k] = in.shape[d];
    v.strides[k++] = in.strides[d];
  }
  if (in.data) v.data = in.data + index * in.strides[dim] * static_cast<int64_t>(in.element_size());
  return v;
}

portable::SelectParams portable_params(const OpContext& ctx, int32_t dim, int64_t index) {
  auto s = moved_bytes_params<portable::SelectParams>(ctx);
  s.dim = dim;
  s.index = index;
  return s;
}

}  // namespace

Status prepare_select(const OpContext& ctx) {
  const auto* p = ctx.op.params_as_SelectParams();
  const TensorView in = ctx.input(0), out = ctx.output();
  int32_t dim = 0;
  CORTEXM_RETURN_IF_STATUS(normalize_dim(ctx, "params.dim", p->dim(), in.rank, &dim));
  CORTEXM_RETURN_IF_STATUS(require_input_dtype(ctx));
  if (p->index() < 0 || p->index() >= in.shape[dim]) return ctx.fail("params.index", p->index(), "must be in [0, input extent)");
  CORTEXM_RETURN_IF_STATUS(require_same_shape(ctx, "output", out, selected_input(ctx, dim, p->index())));
  return check_contiguous_kernel(ctx, [&] { return portable::select_prepare(portable_params(ctx, dim, p->index())); });
}

void run_select(const OpContext& ctx) {
  const auto* p = ctx.op.params_as_SelectParams();
  const int32_t rank = ctx.input(0).rank;
  const int32_t dim = static_cast<int32_t>(p->dim() < 0 ? p->dim() + rank : p->dim());
  if (all_contiguous(ctx))
    portable::select(portable_params(ctx, dim, p->index()), ctx.input(0).data, ctx.output().data);
  else
    copy_logical(selected_input(ctx, dim, p->index()), ctx.output());
}

}  // namespace cortexm::runtime
