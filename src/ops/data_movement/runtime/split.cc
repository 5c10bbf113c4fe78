// Split: consecutive pieces of the input along dim, one per output (sizes from the outputs).
// Tensors sharing one dim order run as the portable split; mixed layouts take the strided path.
#include "cortexm/portable/split_with_sizes.h"

#include "runtime/ops/portable_layout.h"

namespace cortexm::runtime {

namespace {

constexpr int32_t kMaxSplitOutputs = 16;

int32_t split_dim(const OpContext& ctx) {
  const int64_t d = ctx.op.params_as_SplitParams()->dim();
  return static_cast<int32_t>(d < 0 ? d + ctx.input(0).rank : d);
}

bool portable_params(const OpContext& ctx, int64_t* sizes, portable::SplitWithSizesParams* p) {
  Physical in;
  if (!physical(ctx, ctx.op.inputs()->Get(0), &in)) return false;
  const int32_t dim = split_dim(ctx);
  for (int32_t i = 0; i < ctx.num_outputs(); ++i) {
    Physical out;
    if (!physical(ctx, ctx.op.outputs()->Get(i), &out) || !same_order(in, out)) return false;
    sizes[i] = ctx.output(i).shape[dim];
  }
  p->input = in.shape;
  p->dim = in.position[dim];
  p->split_sizes = sizes;
  p->num_outputs = ctx.num_outputs();
  p->element_size = in.element_size;
  return true;
}

}  // namespace

Status prepare_split(const OpContext& ctx) {
  const TensorView in = ctx.input(0);
  int32_t dim = 0;
  CORTEXM_RETURN_IF_STATUS(normalize_dim(ctx, "params.dim", ctx.op.params_as_SplitParams()->dim(), in.rank, &dim));
  int64_t total = 0;
  for (int32_t i = 0; i < ctx.num_outputs(); ++i) {
    const TensorView out = ctx.output(i);
    if (out.dtype != in.dtype) return ctx.fail("output.dtype", static_cast<int64_t>(out.dtype), "must be the input's", i);
    if (out.rank != in.rank) return ctx.fail("output.rank", out.rank, "must be the input's", i);
    for (int32_t d = 0; d < in.rank; ++d)
      if (d != dim && out.shape[d] != in.shape[d])
        return ctx.fail("output.shape", out.shape[d], "must match the input outside dim", d);
    total += out.shape[dim];
  }
  if (total != in.shape[dim]) return ctx.fail("input.shape", in.shape[dim], "must be the sum of the outputs along dim", dim);
  int64_t sizes[kMaxSplitOutputs];
  portable::SplitWithSizesParams p;
  if (portable_params(ctx, sizes, &p)) {
    const Error error = portable::split_with_sizes_prepare(p);
    if (!error.ok()) return ctx.fail(error);
  }
  return kStatusOk;
}

void run_split(const OpContext& ctx) {
  int64_t sizes[kMaxSplitOutputs];
  portable::SplitWithSizesParams p;
  if (portable_params(ctx, sizes, &p)) {
    void* outputs[kMaxSplitOutputs];
    for (int32_t i = 0; i < ctx.num_outputs(); ++i) outputs[i] = ctx.output(i).data;
    portable::split_with_sizes(p, ctx.input(0).data, outputs);
    return;
  }
  const TensorView in = ctx.input(0);
  const int32_t dim = split_dim(ctx);
  int64_t start = 0;
  for (int32_t i = 0; i < ctx.num_outputs(); ++i) {
    const TensorView out = ctx.output(i);
    TensorView part = in;
    part.shape[dim] = out.shape[dim];
    part.data = in.data + start * in.strides[dim] * static_cast<int64_t>(in.element_size());
    copy_logical(part, out);
    start += out.shape[dim];
  }
}

}  // namespace cortexm::runtime
