// QuantizedLayerNorm: int8 layer norm over the trailing normalized_rank dims of a contiguous
// input (rows contiguous); optional int16 weight and int32 bias, one value per row element.
#include "cortexm/kernels/quantized_layer_norm.h"

#include "ops/norm/runtime/layer_norm_codec.h"
#include "runtime/op_context.h"

namespace cortexm::runtime {

namespace {

Status decode(const OpContext& ctx, LayerNormParams* p) {
  const TensorView in = ctx.input(0);
  const auto* t = ctx.op.params_as_QuantizedLayerNormParams();
  CORTEXM_RETURN_IF_STATUS(require_contiguous_same_shape(ctx, DType::kInt8, "layer norm runs on contiguous tensors"));
  const int32_t normalized = t->normalized_rank();
  if (normalized < 1 || normalized > in.rank)
    return ctx.fail("params.normalized_rank", normalized, "must be in [1, input rank]");
  int64_t rows = 1, row_size = 1;
  for (int32_t d = 0; d < in.rank; ++d) {
    int64_t& part = d < in.rank - normalized ? rows : row_size;
    part *= in.shape[d];
    if (part > INT32_MAX) return ctx.fail("input.shape", in.shape[d], "is too large for int32 extents", d);
  }
  p->rows = static_cast<int32_t>(rows);
  p->row_size = static_cast<int32_t>(row_size);
  program::decode_layer_norm(*t, p);
  return kStatusOk;
}

}  // namespace

Status prepare_quantized_layer_norm(const OpContext& ctx) {
  LayerNormParams p;
  CORTEXM_RETURN_IF_STATUS(decode(ctx, &p));
  const Error error = quantized_layer_norm_prepare(p);
  if (!error.ok()) return ctx.fail(error);
  CORTEXM_RETURN_IF_STATUS(require_row_operand(ctx, 1, "weight", DType::kInt16, p.row_size));
  return require_row_operand(ctx, 2, "bias", DType::kInt32, p.row_size);
}

void run_quantized_layer_norm(const OpContext& ctx) {
  LayerNormParams p;
  decode(ctx, &p);
  quantized_layer_norm(p, reinterpret_cast<const int8_t*>(ctx.input(0).data),
                       ctx.has_input(1) ? reinterpret_cast<const int16_t*>(ctx.input(1).data) : nullptr,
                       ctx.has_input(2) ? reinterpret_cast<const int32_t*>(ctx.input(2).data) : nullptr,
                       reinterpret_cast<int8_t*>(ctx.output().data));
}

}  // namespace cortexm::runtime
