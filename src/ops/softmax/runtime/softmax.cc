// Softmax / LogSoftmax (float fallback) through the portable kernels the interpreter also runs,
// so both compute the same bits. Contiguous input and output.
#include "cortexm/portable/softmax.h"

#include "runtime/op_context.h"

namespace cortexm::runtime {

namespace {

portable::SoftmaxParams decode(const OpContext& ctx) {
  const TensorView in = ctx.input(0);
  portable::SoftmaxParams p;
  p.input.rank = in.rank;
  for (int32_t d = 0; d < in.rank && d < portable::kMaxDims; ++d) p.input.dims[d] = in.shape[d];
  p.dim = ctx.op.params_as_SoftmaxParams()->dim();
  return p;
}

Status prepare(const OpContext& ctx) {
  CORTEXM_RETURN_IF_STATUS(require_contiguous_same_shape(ctx, DType::kFloat32, "softmax runs on contiguous tensors"));
  CORTEXM_RETURN_IF_STATUS(require_rank_le(ctx, "input", ctx.input(0), portable::kMaxDims));
  const Error error = portable::softmax_prepare(decode(ctx));
  return error.ok() ? kStatusOk : ctx.fail(error);
}

}  // namespace

Status prepare_softmax(const OpContext& ctx) { return prepare(ctx); }
Status prepare_log_softmax(const OpContext& ctx) { return prepare(ctx); }

void run_softmax(const OpContext& ctx) {
  portable::softmax_f32(decode(ctx), reinterpret_cast<const float*>(ctx.input(0).data),
                        reinterpret_cast<float*>(ctx.output().data));
}

void run_log_softmax(const OpContext& ctx) {
  portable::log_softmax_f32(decode(ctx), reinterpret_cast<const float*>(ctx.input(0).data),
                            reinterpret_cast<float*>(ctx.output().data));
}

}  // namespace cortexm::runtime
