// Slice: output[..., j, ...] = input[..., start + j * step, ...] along dim; the output's extent
// along dim says how many.
#include "cortexm/portable/slice.h"

#include "runtime/ops/portable_layout.h"

namespace cortexm::runtime {

namespace {

TensorView sliced_input(const OpContext& ctx, int32_t dim) {
  const auto* p = ctx.op.params_as_SliceParams();
  const TensorView in = ctx.input(0);
  TensorView v = in;
  v.shape[dim] = ctx.output().shape[dim];
  // With one element along dim its stride is never used; prepare bounds step only for more, so a
  // huge step there must not be multiplied.
  v.strides[dim] = v.shape[dim] > 1 ? in.strides[dim] * p->step() : in.strides[dim];
  if (v.data) v.data = in.data + p->start() * in.strides[dim] * static_cast<int64_t>(in.element_size());
  return v;
}

int32_t slice_dim(const OpContext& ctx) {
  const int64_t d = ctx.op.params_as_SliceParams()->dim();
  return static_cast<int32_t>(d < 0 ? d + ctx.input(0).rank : d);
}

portable::SliceParams portable_params(const OpContext& ctx) {
  const auto* p = ctx.op.params_as_SliceParams();
  const int32_t dim = slice_dim(ctx);
  const int64_t count = ctx.output().shape[dim];
  auto s = moved_bytes_params<portable::SliceParams>(ctx);
  s.dim = dim;
  s.start = p->start();
  s.end = count > 0 ? p->start() + (count - 1) * p->step() + 1 : p->start();
  s.step = p->step();
  return s;
}

}  // namespace

Status prepare_slice(const OpContext& ctx) {
  const auto* p = ctx.op.params_as_SliceParams();
  const TensorView in = ctx.input(0), out = ctx.output();
  int32_t dim = 0;
  CORTEXM_RETURN_IF_STATUS(normalize_dim(ctx, "params.dim", p->dim(), in.rank, &dim));
  CORTEXM_RETURN_IF_STATUS(require_input_dtype(ctx));
  if (out.rank != in.rank) return ctx.fail("output.rank", out.rank, "must be the input's");
  if (p->step() < 1) return ctx.fail("params.step", p->step(), "must be >= 1");
  if (p->start() < 0 || p->start() > in.shape[dim]) return ctx.fail("params.start", p->start(), "must be in [0, input extent]");
  const int64_t count = out.shape[dim];
  if (count > 0 && (count - 1 > (in.shape[dim] - 1 - p->start()) / p->step() || p->start() >= in.shape[dim]))
    return ctx.fail("output.shape", count, "reads past the input along dim", dim);
  CORTEXM_RETURN_IF_STATUS(require_same_shape(ctx, "output", out, sliced_input(ctx, dim)));
  return check_contiguous_kernel(ctx, [&] { return portable::slice_prepare(portable_params(ctx)); });
}

void run_slice(const OpContext& ctx) {
  if (all_contiguous(ctx))
    portable::slice(portable_params(ctx), ctx.input(0).data, ctx.output().data);
  else
    copy_logical(sliced_input(ctx, slice_dim(ctx)), ctx.output());
}

}  // namespace cortexm::runtime
