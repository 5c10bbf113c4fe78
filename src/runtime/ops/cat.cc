// Cat: the inputs one after another along dim, any layout.
#include "runtime/op_context.h"

namespace cortexm::runtime {

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
  return kStatusOk;
}

void run_cat(const OpContext& ctx) {
  const TensorView out = ctx.output();
  const int64_t raw_dim = ctx.op.params_as_CatParams()->dim();
  const int32_t dim = static_cast<int32_t>(raw_dim < 0 ? raw_dim + out.rank : raw_dim);
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
