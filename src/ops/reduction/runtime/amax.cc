// Amax / Amin (int8 / int16, exact: the output keeps the input's qparams) and FloatAmax /
// FloatAmin (float fallback): max / min over the reduced dims through the portable kernel the
// interpreter runs; contiguous input and output. Argmax / Argmin / FloatArgmax / FloatArgmin: the
// int64 index of the first max / min along one dim or over every dim.
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

// index: the output is the int64 index of the extremum (argmax / argmin), else the extremum.
Status prepare(const OpContext& ctx, bool integer, bool index = false) {
  const TensorView in = ctx.input(0), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_input_dtype(ctx, integer));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "output", out, index ? DType::kInt64 : in.dtype));
  if (!in.is_contiguous() || !out.is_contiguous()) return ctx.unsupported("input", 0, "must be contiguous");
  const auto* reduced = ctx.op.params_as_MeanParams()->reduced();
  if (!reduced) return ctx.fail("params.reduced", 0, "must be present");
  if (in.rank > portable::kMaxDims) return ctx.unsupported("input.rank", in.rank, "must be <= 6");
  for (uint32_t k = 0; k < reduced->size(); ++k)
    if (reduced->Get(k) >= in.rank || (k > 0 && reduced->Get(k) <= reduced->Get(k - 1)))
      return ctx.fail("params.reduced", reduced->Get(k), "must be ascending dims of the input", k);
  if (index && reduced->size() > 1 && static_cast<int32_t>(reduced->size()) != in.rank)
    return ctx.fail("params.reduced.size", reduced->size(), "must be one dim or every dim of the input");
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

void run_index(const OpContext& ctx, portable::Extremum kind) {
  const portable::MeanParams p = decode(ctx);
  const TensorView in = ctx.input(0);
  int64_t* out = reinterpret_cast<int64_t*>(ctx.output().data);
  if (in.dtype == DType::kFloat32)
    portable::arg_extremum_f32(p, kind, reinterpret_cast<const float*>(in.data), out);
  else if (in.dtype == DType::kInt8)
    portable::arg_extremum_s8(p, kind, reinterpret_cast<const int8_t*>(in.data), out);
  else
    portable::arg_extremum_s16(p, kind, reinterpret_cast<const int16_t*>(in.data), out);
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
Status prepare_argmax(const OpContext& ctx) { return prepare(ctx, true, true); }
void run_argmax(const OpContext& ctx) { run_index(ctx, portable::Extremum::kMax); }
Status prepare_argmin(const OpContext& ctx) { return prepare(ctx, true, true); }
void run_argmin(const OpContext& ctx) { run_index(ctx, portable::Extremum::kMin); }
Status prepare_float_argmax(const OpContext& ctx) { return prepare(ctx, false, true); }
void run_float_argmax(const OpContext& ctx) { run_index(ctx, portable::Extremum::kMax); }
Status prepare_float_argmin(const OpContext& ctx) { return prepare(ctx, false, true); }
void run_float_argmin(const OpContext& ctx) { run_index(ctx, portable::Extremum::kMin); }

}  // namespace cortexm::runtime
