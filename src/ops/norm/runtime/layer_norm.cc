// LayerNorm (float fallback) through the portable kernel the interpreter also runs, so both
// compute the same bits. Contiguous float32 tensors; weight and bias (inputs 1, 2) optional, one
// value per element of a row.
#include "cortexm/portable/layer_norm.h"

#include "runtime/op_context.h"

namespace cortexm::runtime {

namespace {

portable::LayerNormParams decode(const OpContext& ctx) {
  const TensorView in = ctx.input(0);
  const fb::LayerNormParams* t = ctx.op.params_as_LayerNormParams();
  portable::LayerNormParams p;
  p.input.rank = in.rank;
  for (int32_t d = 0; d < in.rank && d < portable::kMaxDims; ++d) p.input.dims[d] = in.shape[d];
  p.normalized_rank = t->normalized_rank();
  p.eps = t->eps();
  return p;
}

const float* optional_data(const OpContext& ctx, int32_t i) {
  return ctx.has_input(i) ? reinterpret_cast<const float*>(ctx.input(i).data) : nullptr;
}

}  // namespace

Status prepare_layer_norm(const OpContext& ctx) {
  CORTEXM_RETURN_IF_STATUS(require_contiguous_same_shape(ctx, DType::kFloat32, "layer norm runs on contiguous tensors"));
  CORTEXM_RETURN_IF_STATUS(require_rank_le(ctx, "input", ctx.input(0), portable::kMaxDims));
  const portable::LayerNormParams p = decode(ctx);
  const Error error = portable::layer_norm_prepare(p);
  if (!error.ok()) return ctx.fail(error);
  const int64_t row_size = portable::dims_product(p.input, p.input.rank - p.normalized_rank, p.input.rank);
  CORTEXM_RETURN_IF_STATUS(require_row_operand(ctx, 1, "weight", DType::kFloat32, row_size));
  return require_row_operand(ctx, 2, "bias", DType::kFloat32, row_size);
}

void run_layer_norm(const OpContext& ctx) {
  portable::layer_norm_f32(decode(ctx), reinterpret_cast<const float*>(ctx.input(0).data),
                           optional_data(ctx, 1), optional_data(ctx, 2),
                           reinterpret_cast<float*>(ctx.output().data));
}

}  // namespace cortexm::runtime
