// Cat: the inputs one after another along dim. Tensors sharing one dim order run as the portable
// cat along that dim's memory position; mixed layouts take the strided path.
#include "cortexm/portable/cat.h"

#include "runtime/ops/portable_layout.h"

namespace cortexm::runtime {

namespace {

constexpr int32_t kMaxCatInputs = 16;

int32_t cat_dim(const OpContext& ctx) {
  const int64_t d = ctx.op.params_as_CatParams()->dim();
  return static_cast<int32_t>(d < 0 ? d + ctx.output().rank : d);
}

// Shapes in memory order when every tensor shares the output's dim order.
bool portable_params(const OpContext& ctx, portable::Shape* shapes, portable::CatParams* p) {
  Physical out;
  if (!physical(ctx, ctx.op.outputs()->Get(0), &out)) return false;
  for (int32_t i = 0; i < ctx.num_inputs(); ++i) {
    Physical in;
    if (!physical(ctx, ctx.op.inputs()->Get(i), &in) || !same_order(in, out)) return false;
    shapes[i] = in.shape;
  }
  p->inputs = shapes;
  p->num_inputs = ctx.num_inputs();
  p->dim = out.position[cat_dim(ctx)];
  p->element_size = out.element_size;
  return true;
}

}  // namespace

Status prepare_cat(const OpContext& ctx) {
  const TensorView out = ctx.output();
  int32_t dim = 0;
  CORTEXM_RETURN_IF_STATUS(normalize_dim(ctx, "params.dim", ctx.op.params_as_CatParams()->dim(), out.rank, &dim));
  int64_t total = 0;
  for (int32_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.fail("inputs", -1, "cat takes no absent inputs", i);
    const TensorView in = ctx.input(i);
    if (in.dtype != out.dtype) return ctx.fail("input.dtype", static_cast<int64_t>(in.dtype), "must be the output's", i);
    if (in.rank != out.rank) return ctx.fail("input.rank", in.rank, "must be the output's", i);
    for (int32_t d = 0; d < out.rank; ++d)
      if (d != dim && in.shape[d] != out.shape[d])
        return ctx.fail("input.shape", in.shape[d], "must match the output outside dim", d);
    total += in.shape[dim];
  }
  if (total != out.shape[dim]) return ctx.fail("output.shape", out.shape[dim], "must be the sum along dim", dim);
  portable::Shape shapes[kMaxCatInputs];
  portable::CatParams p;
  if (portable_params(ctx, shapes, &p)) {
    const Error error = portable::cat_prepare(p);
    if (!error.ok()) return ctx.fail(error);
  }
  return kStatusOk;
}

void run_cat(const OpContext& ctx) {
  portable::Shape shapes[kMaxCatInputs];
  portable::CatParams p;
  if (portable_params(ctx, shapes, &p)) {
    const void* inputs[kMaxCatInputs];
    for (int32_t i = 0; i < ctx.num_inputs(); ++i) inputs[i] = ctx.input(i).data;
    portable::cat(p, inputs, ctx.output().data);
    return;
  }
  const TensorView out = ctx.output();
  const int32_t dim = cat_dim(ctx);
  int64_t start = 0;
  for (int32_t i = 0; i < ctx.num_inputs(); ++i) {
    const TensorView in = ctx.input(i);
    TensorView part = out;
    part.shape[dim] = in.shape[dim];
    part.data = out.data + start * out.strides[dim] * static_cast<int64_t>(out.element_size());
    copy_logical(in, part);
    start += in.shape[dim];
  }
}

}  // namespace cortexm::runtime
