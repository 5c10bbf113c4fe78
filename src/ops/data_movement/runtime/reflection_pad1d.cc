// ReflectionPad1d: mirrors the last dim (the edge is not repeated), as torch; negative pads crop.
#include "cortexm/portable/reflection_pad1d.h"

#include "runtime/ops/portable_layout.h"

namespace cortexm::runtime {

namespace {

portable::ReflectionPad1dParams portable_params(const OpContext& ctx) {
  const auto* p = ctx.op.params_as_ReflectionPad1dParams();
  auto r = moved_bytes_params<portable::ReflectionPad1dParams>(ctx);
  r.left = p->left();
  r.right = p->right();
  return r;
}

}  // namespace

Status prepare_reflection_pad1d(const OpContext& ctx) {
  const auto* p = ctx.op.params_as_ReflectionPad1dParams();
  const TensorView in = ctx.input(0), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_input_dtype(ctx));
  if (in.rank < 1 || out.rank != in.rank) return ctx.fail("output.rank", out.rank, "must be the input's");
  const int64_t width = in.shape[in.rank - 1];
  if (p->left() >= width || p->right() >= width || p->left() <= -width || p->right() <= -width)
    return ctx.fail("params.left", p->left(), "padding must be smaller than the input width");
  for (int32_t d = 0; d + 1 < in.rank; ++d)
    if (out.shape[d] != in.shape[d]) return ctx.fail("output.shape", out.shape[d], "must be the input's", d);
  if (out.shape[in.rank - 1] != width + p->left() + p->right() || out.shape[in.rank - 1] < 0)
    return ctx.fail("output.shape", out.shape[in.rank - 1], "must be width + left + right", in.rank - 1);
  return check_contiguous_kernel(ctx, [&] { return portable::reflection_pad1d_prepare(portable_params(ctx)); });
}

void run_reflection_pad1d(const OpContext& ctx) {
  if (all_contiguous(ctx)) {
    portable::reflection_pad1d(portable_params(ctx), ctx.input(0).data, ctx.output().data);
    return;
  }
  const auto* p = ctx.op.params_as_ReflectionPad1dParams();
  const TensorView in = ctx.input(0), out = ctx.output();
  const int32_t last = in.rank - 1;
  const int64_t width = in.shape[last];
  // Column j of the output is a view of one input column: copy column by column.
  for (int64_t j = 0; j < out.shape[last]; ++j) {
    TensorView src = in, dst = out;
    src.shape[last] = dst.shape[last] = 1;
    src.data = in.data + portable::reflection_source_index(j, width, p->left()) * in.strides[last] * static_cast<int64_t>(in.element_size());
    dst.data = out.data + j * out.strides[last] * static_cast<int64_t>(out.element_size());
    copy_logical(src, dst);
  }
}

}  // namespace cortexm::runtime
