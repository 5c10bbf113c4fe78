// Amax / Amin (int8 / int16, exact: the output keeps the input's qparams) and FloatAmax /
// FloatAmin (float fallback): max / min over the reduced dims through the portable kernel the
// interpreter runs; contiguous input and output.
#include "cortexm/portable/amax.h"
#include "runtime/op_context.h"

namespace cortexm::runtime {

namespace {

portable::MeanParams decode(const OpContext& ctx) {
  const TensorView in = ctx.input(0);
  const auto* reduced = ctx.op.params_as_MeanParams()->reduced();
  portable::MeanParams p;
  p.input.rank = in.rank;
  for (int32_t d = 0; d < in.rank; ++d) p.input.dims[d] = in.shape[d];
  // An empty list reduces every dim; a rank-0 input has none to list.
  p.num_dims = static_cast<int32_t>(reduced->size());
  for (uint32_t k = 0; k < reduced->size(); ++k) p.dims[k] = reduced->Get(k);
  p.keepdim = false;  // the output's shape comes from its tensor; only its element count matters
  return p;
}

Status prepare(const OpContext& ctx, bool integer) {
  const TensorView in = ctx.input(0), out = ctx.output();
  if (integer) {
    if (in.dtype != DType::kInt8 && in.dtype != DType::kInt16)
      return ctx.unsupported("input.dtype", static_cast<int64_t>(in.dtype), "must be int8 or int16");
    CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "output", out, in.dtype));
  } else {
    CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "input", in, DType::kFloat32));
    CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "output", out, DType::kFloat32));
  }
  if (!in.is_contiguous() || !out.is_contiguous()) return ctx.unsupported("input", 0, "must be contiguous");
  const auto* reduced = ctx.op.params_as_MeanParams()->reduced();
  if (!reduced) return ctx.fail("params.reduced", 0, "must be present");
  if (in.rank > portable::kMaxDims) return ctx.unsupported("input.rank", in.rank, "must be <= 6");
  for (uint32_t k = 0; k < reduced->size(); ++k)
    if (reduced->Get(k) >= in.rank || (k > 0 && reduced->Get(k) <= reduced->Get(k - 1)))
      return ctx.fail("params.reduced", reduced->Get(k), "must be ascending dims of the input", k);
  portable::Shape shape;
  const Error error = portable::extremum_prepare(decode(ctx), &shape);
  if (!error.ok()) return ctx.fail(error);
  int64_t kept = 1;
  for (int32_t d = 0; d < shape.rank; ++d) kept *= shape.dims[d];
  if (out.numel() != kept) return ctx.fail("output.numel", out.numel(), "must be the product of the kept dims");
  return kStatusOk;
}

void run(const OpContext& ctx, portable::Extremum kind) {
  const portable::MeanParams p = decode(ctx);
  const TensorView in = ctx.input(0), out = ctx.output();
  if (in.dtype == DType::kFloat32)
    portable::extremum_f32(p, kind, reinterpret_cast<const float*>(in.data), reinterpret_cast<float*>(out.data));
  else if (in.dtype == DType::kInt8)
    portable::extremum_s8(p, kind, reinterpret_cast<const int8_t*>(in.data), reinterpret_cast<int8_t*>(out.data));
  else
    portable::extremum_s16(p, kind, reinterpret_cast<const int16_t*>(in.data),
                           reinterpret_cast<int16_t*>(out.data));
}

}  // namespace

Status prepare_amax(const OpContext& ctx) { return prepare(ctx, true); }
void run_amax(const OpContext& ctx) { run(ctx, portable::Extremum::kMax); }
Status prepare_amin(const OpContext& ctx) { return prepare(ctx, true); }
void run_amin(const OpContext& ctx) { run(ctx, portable::Extremum::kMin); }
Status prepare_float_amax(const OpContext& ctx) { return prepare(ctx, false); }
void run_float_amax(const OpContext& ctx) { run(ctx, portable::Extremum::kMax); }
Status prepare_float_amin(const OpContext& ctx) { return prepare(ctx, false); }
void run_float_amin(const OpContext& ctx) { run(ctx, portable::Extremum::kMin); }

}  // namespace cortexm::runtime
