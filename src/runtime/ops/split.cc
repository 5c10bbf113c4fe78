// Split: consecutive pieces of the input along dim, one per output (sizes from the outputs).
#include "runtime/op_context.h"

namespace cortexm::runtime {

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
  return kStatusOk;
}

void run_split(const OpContext& ctx) {
  const TensorView in = ctx.input(0);
  const int64_t raw = ctx.op.params_as_SplitParams()->dim();
  const int32_t dim = static_cast<int32_t>(raw < 0 ? raw + in.rank : raw);
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
