// QuantizedSvdfState and QuantizedSvdfOutput: SVDF's two stages (svdf_kernels.h) on contiguous
// rank-2 tensors; the weights and the bias are constants.
#include "ops/svdf/runtime/svdf_codec.h"
#include "runtime/op_context.h"

namespace cortexm::runtime {

namespace {

Status require_matrix(const OpContext& ctx, const char* field, const TensorView& t, DType dtype) {
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, field, t, dtype));
  CORTEXM_RETURN_IF_STATUS(require_rank(ctx, field, t, 2));
  if (!t.is_contiguous()) return ctx.unsupported(field, 0, "must be contiguous");
  if (t.shape[0] > INT32_MAX || t.shape[1] > INT32_MAX) return ctx.fail(field, t.numel(), "is too large");
  return kStatusOk;
}

Status require_constant(const OpContext& ctx, const char* field, const TensorView& t) {
  return t.data ? kStatusOk : ctx.unsupported(field, 0, "must be a constant");
}

// Stage 1's params and extents: input [B, I], state [B, F * M], feature weights [F, I].
Status decode_state(const OpContext& ctx, SvdfStateParams* p) {
  const TensorView x = ctx.input(0), state = ctx.input(1), w = ctx.input(2), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_matrix(ctx, "input", x, DType::kInt8));
  CORTEXM_RETURN_IF_STATUS(require_matrix(ctx, "state", state, DType::kInt16));
  CORTEXM_RETURN_IF_STATUS(require_matrix(ctx, "feature_weights", w, DType::kInt8));
  CORTEXM_RETURN_IF_STATUS(require_matrix(ctx, "output", out, DType::kInt16));
  CORTEXM_RETURN_IF_STATUS(require_same_shape(ctx, "output", out, state));
  program::decode_svdf_state(*ctx.op.params_as_QuantizedSvdfStateParams(), p);
  SvdfShape& s = p->shape;
  s.batches = static_cast<int32_t>(x.shape[0]);
  s.input_size = static_cast<int32_t>(x.shape[1]);
  s.filters = static_cast<int32_t>(w.shape[0]);
  if (w.shape[1] != x.shape[1]) return ctx.fail("feature_weights.shape[1]", w.shape[1], "must equal input.shape[1]");
  if (state.shape[0] != x.shape[0]) return ctx.fail("state.shape[0]", state.shape[0], "must equal input.shape[0]");
  if (s.memory < 1 || state.shape[1] != int64_t{s.filters} * s.memory)
    return ctx.fail("state.shape[1]", state.shape[1], "must be filters * memory");
  return kStatusOk;
}

// Stage 2's params and extents: state [B, F * M], time weights [F, M], bias [F / rank].
Status decode_output(const OpContext& ctx, SvdfOutputParams* p) {
  const TensorView state = ctx.input(0), w = ctx.input(1), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_matrix(ctx, "state", state, DType::kInt16));
  CORTEXM_RETURN_IF_STATUS(require_matrix(ctx, "time_weights", w, DType::kInt16));
  CORTEXM_RETURN_IF_STATUS(require_matrix(ctx, "output", out, DType::kInt8));
  program::decode_svdf_output(*ctx.op.params_as_QuantizedSvdfOutputParams(), p);
  SvdfShape& s = p->shape;
  s.batches = static_cast<int32_t>(state.shape[0]);
  s.filters = static_cast<int32_t>(w.shape[0]);
  s.memory = static_cast<int32_t>(w.shape[1]);
  if (state.shape[1] != int64_t{s.filters} * s.memory)
    return ctx.fail("state.shape[1]", state.shape[1], "must be time_weights.shape[0] * time_weights.shape[1]");
  if (s.rank < 1 || s.filters % s.rank != 0) return ctx.fail("rank", s.rank, "must be >= 1 and divide the filters");
  if (out.shape[0] != state.shape[0] || out.shape[1] != s.filters / s.rank)
    return ctx.fail("output.shape[1]", out.shape[1], "must be [batches, filters / rank]");
  return kStatusOk;
}

}  // namespace

Status prepare_quantized_svdf_state(const OpContext& ctx) {
  SvdfStateParams p;
  CORTEXM_RETURN_IF_STATUS(decode_state(ctx, &p));
  CORTEXM_RETURN_IF_STATUS(require_constant(ctx, "feature_weights", ctx.input(2)));
  const Error error = svdf_state_prepare(p);
  return error.ok() ? kStatusOk : ctx.fail(error);
}

void run_quantized_svdf_state(const OpContext& ctx) {
  SvdfStateParams p;
  decode_state(ctx, &p);
  svdf_state(p, reinterpret_cast<const int8_t*>(ctx.input(0).data), reinterpret_cast<const int16_t*>(ctx.input(1).data),
             reinterpret_cast<const int8_t*>(ctx.input(2).data), reinterpret_cast<int16_t*>(ctx.output().data));
}

Status prepare_quantized_svdf_output(const OpContext& ctx) {
  SvdfOutputParams p;
  CORTEXM_RETURN_IF_STATUS(decode_output(ctx, &p));
  CORTEXM_RETURN_IF_STATUS(require_constant(ctx, "time_weights", ctx.input(1)));
  if (ctx.has_input(2)) {
    const TensorView bias = ctx.input(2);
    CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "bias", bias, DType::kInt32));
    CORTEXM_RETURN_IF_STATUS(require_constant(ctx, "bias", bias));
    if (bias.numel() != p.shape.units()) return ctx.fail("bias.numel", bias.numel(), "must be filters / rank");
  }
  const Error error = svdf_output_prepare(p);
  return error.ok() ? kStatusOk : ctx.fail(error);
}

void run_quantized_svdf_output(const OpContext& ctx) {
  SvdfOutputParams p;
  decode_output(ctx, &p);
  svdf_output(p, reinterpret_cast<const int16_t*>(ctx.input(0).data),
              reinterpret_cast<const int16_t*>(ctx.input(1).data),
              ctx.has_input(2) ? reinterpret_cast<const int32_t*>(ctx.input(2).data) : nullptr,
              reinterpret_cast<int8_t*>(ctx.output().data));
}

}  // namespace cortexm::runtime
