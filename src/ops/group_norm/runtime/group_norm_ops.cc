// GroupNorm (float fallback), QuantizedGroupNorm (int8) and QuantizedGroupNormS16 (int16): [N, C, *]
// input and output of one dtype, shape and layout, contiguous or channels-last; optional weight and
// bias (inputs 1, 2), one per channel.
#include "ops/group_norm/runtime/group_norm_codec.h"
#include "runtime/op_context.h"

namespace cortexm::runtime {

namespace {

// The input's extents and layout (the groups come from the params).
Status decode_shape(const OpContext& ctx, DType dtype, GroupNormShape* s) {
  const TensorView in = ctx.input(0), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "input", in, dtype));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "output", out, dtype));
  CORTEXM_RETURN_IF_STATUS(require_same_shape(ctx, "output", out, in));
  if (in.rank < 2) return ctx.fail("input.rank", in.rank, "must be >= 2 ([N, C, *])");
  if (!in.same_layout(out)) return ctx.unsupported("output", 0, "group norm writes the input's layout");
  if (in.is_contiguous()) s->channels_last = false;
  else if (in.is_channels_last()) s->channels_last = true;
  else return ctx.unsupported("input", 0, "group norm runs on contiguous or channels-last tensors");
  int64_t spatial = 1;
  for (int32_t d = 2; d < in.rank; ++d) spatial *= in.shape[d];
  if (in.shape[0] > INT32_MAX || in.shape[1] > INT32_MAX || spatial > INT32_MAX)
    return ctx.fail("input.numel", in.numel(), "is too large for int32 extents");
  s->batches = static_cast<int32_t>(in.shape[0]);
  s->channels = static_cast<int32_t>(in.shape[1]);
  s->spatial = static_cast<int32_t>(spatial);
  return kStatusOk;
}

// Optional input i: absent, or `dtype`, contiguous, one value per channel.
Status require_channel_operand(const OpContext& ctx, int32_t i, const char* field, DType dtype, int32_t channels) {
  if (!ctx.has_input(i)) return kStatusOk;
  const TensorView t = ctx.input(i);
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, field, t, dtype));
  if (t.numel() != channels) return ctx.fail(field, t.numel(), "must have one value per channel");
  if (!t.is_contiguous()) return ctx.unsupported(field, 0, "must be contiguous");
  return kStatusOk;
}

template <class T>
const T* optional_data(const OpContext& ctx, int32_t i) {
  return ctx.has_input(i) ? reinterpret_cast<const T*>(ctx.input(i).data) : nullptr;
}

Status decode_float(const OpContext& ctx, GroupNormShape* s, float* eps) {
  CORTEXM_RETURN_IF_STATUS(decode_shape(ctx, DType::kFloat32, s));
  const fb::GroupNormParams* t = ctx.op.params_as_GroupNormParams();
  s->groups = t->num_groups();
  *eps = t->eps();
  return kStatusOk;
}

Status decode_quantized(const OpContext& ctx, DType dtype, QuantizedGroupNormParams* p) {
  CORTEXM_RETURN_IF_STATUS(decode_shape(ctx, dtype, &p->shape));
  program::decode_group_norm(*ctx.op.params_as_QuantizedGroupNormParams(), p);
  return kStatusOk;
}

}  // namespace

Status prepare_group_norm(const OpContext& ctx) {
  GroupNormShape s;
  float eps = 0.0f;
  CORTEXM_RETURN_IF_STATUS(decode_float(ctx, &s, &eps));
  const Error error = group_norm_f32_prepare(s, eps);
  if (!error.ok()) return ctx.fail(error);
  CORTEXM_RETURN_IF_STATUS(require_channel_operand(ctx, 1, "weight", DType::kFloat32, s.channels));
  return require_channel_operand(ctx, 2, "bias", DType::kFloat32, s.channels);
}

void run_group_norm(const OpContext& ctx) {
  GroupNormShape s;
  float eps = 0.0f;
  decode_float(ctx, &s, &eps);
  group_norm_f32(s, eps, reinterpret_cast<const float*>(ctx.input(0).data), optional_data<float>(ctx, 1),
                 optional_data<float>(ctx, 2), reinterpret_cast<float*>(ctx.output().data));
}

namespace {

// The int8 and int16 forms: input and output of T (dtype D), int16 weight and int32 bias per channel.
template <class T, DType D, Error (*Prepare)(const QuantizedGroupNormParams&)>
Status prepare_quantized(const OpContext& ctx) {
  QuantizedGroupNormParams p;
  CORTEXM_RETURN_IF_STATUS(decode_quantized(ctx, D, &p));
  const Error error = Prepare(p);
  if (!error.ok()) return ctx.fail(error);
  CORTEXM_RETURN_IF_STATUS(require_channel_operand(ctx, 1, "weight", DType::kInt16, p.shape.channels));
  return require_channel_operand(ctx, 2, "bias", DType::kInt32, p.shape.channels);
}

template <class T, DType D,
          void (*Run)(const QuantizedGroupNormParams&, const T*, const int16_t*, const int32_t*, T*)>
void run_quantized(const OpContext& ctx) {
  QuantizedGroupNormParams p;
  decode_quantized(ctx, D, &p);
  Run(p, reinterpret_cast<const T*>(ctx.input(0).data), optional_data<int16_t>(ctx, 1),
      optional_data<int32_t>(ctx, 2), reinterpret_cast<T*>(ctx.output().data));
}

}  // namespace

Status prepare_quantized_group_norm(const OpContext& ctx) {
  return prepare_quantized<int8_t, DType::kInt8, quantized_group_norm_prepare>(ctx);
}

void run_quantized_group_norm(const OpContext& ctx) {
  run_quantized<int8_t, DType::kInt8, quantized_group_norm>(ctx);
}

Status prepare_quantized_group_norm_s16(const OpContext& ctx) {
  return prepare_quantized<int16_t, DType::kInt16, quantized_group_norm_s16_prepare>(ctx);
}

void run_quantized_group_norm_s16(const OpContext& ctx) {
  run_quantized<int16_t, DType::kInt16, quantized_group_norm_s16>(ctx);
}

}  // namespace cortexm::runtime
