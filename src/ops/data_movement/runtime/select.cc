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
  portable::SelectParams s;
  s.input = logical_shape(ctx.input(0));
  s.dim = dim;
  s.index = index;
  s.element_size = static_cast<int32_t>(ctx.input(0).element_size());
  return s;
}

}  // namespace

Status prepare_select(const OpContext& ctx) {
  const auto* p = ctx.op.params_as_SelectParams();
  const TensorView in = ctx.input(0), out = ctx.output();
  int32_t dim = 0;
  CORTEXM_RETURN_IF_STATUS(normalize_dim(ctx, "params.dim", p->dim(), in.rank, &dim));
  if (in.dtype != out.dtype) return ctx.fail("output.dtype", static_cast<int64_t>(out.dtype), "must be the input's");
  if (p->index() < 0 || p->index() >= in.shape[dim]) return ctx.fail("params.index", p->index(), "must be in [0, input extent)");
  CORTEXM_RETURN_IF_STATUS(require_same_shape(ctx, "output", out, selected_input(ctx, dim, p->index())));
  if (all_contiguous(ctx)) {
    const Error error = portable::select_prepare(portable_params(ctx, dim, p->index()));
    if (!error.ok()) return ctx.fail(error);
  }
  return kStatusOk;
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
