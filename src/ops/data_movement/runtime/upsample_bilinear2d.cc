// FloatUpsampleBilinear2d (float32, torch's arithmetic) and QuantizedUpsampleBilinear2d (int8 /
// int16, TFLite Micro's RESIZE_BILINEAR): bilinear resize of contiguous NCHW through the portable
// kernel the interpreter runs. The program's steps and sizes are checked before any pixel is read.
#include "cortexm/portable/upsample_bilinear2d.h"

#include "runtime/ops/portable_layout.h"

namespace cortexm::runtime {

namespace {

portable::UpsampleBilinear2dParams decode(const OpContext& ctx, bool integer) {
  portable::UpsampleBilinear2dParams p;
  p.input = logical_shape(ctx.input(0));
  p.out_h = ctx.output().shape[2];
  p.out_w = ctx.output().shape[3];
  if (integer) {
    p.align_corners = ctx.op.params_as_QuantizedUpsampleBilinear2dParams()->align_corners();
  } else {
    const auto* params = ctx.op.params_as_UpsampleBilinear2dParams();
    p.align_corners = params->align_corners();
    p.step_h = params->step_h();
    p.step_w = params->step_w();
  }
  return p;
}

Status prepare(const OpContext& ctx, bool integer) {
  const TensorView in = ctx.input(0), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_input_dtype(ctx, integer));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "output", out, in.dtype));
  CORTEXM_RETURN_IF_STATUS(require_rank(ctx, "input", in, 4));
  CORTEXM_RETURN_IF_STATUS(require_rank(ctx, "output", out, 4));
  if (!in.is_contiguous() || !out.is_contiguous()) return ctx.unsupported("input", 0, "must be contiguous");
  if (integer ? !ctx.op.params_as_QuantizedUpsampleBilinear2dParams() : !ctx.op.params_as_UpsampleBilinear2dParams())
    return ctx.fail("params", 0, "must be present");
  for (int32_t d = 0; d < 2; ++d)
    if (out.shape[d] != in.shape[d]) return ctx.fail("output.shape", out.shape[d], "must be the input's", d);
  const Error error = portable::upsample_bilinear2d_prepare(decode(ctx, integer), integer);
  if (!error.ok()) return ctx.fail(error);
  return kStatusOk;
}

void run(const OpContext& ctx) {
  const TensorView in = ctx.input(0), out = ctx.output();
  const bool integer = in.dtype != DType::kFloat32;
  const portable::UpsampleBilinear2dParams p = decode(ctx, integer);
  if (in.dtype == DType::kFloat32)
    portable::upsample_bilinear2d_f32(p, reinterpret_cast<const float*>(in.data), reinterpret_cast<float*>(out.data));
  else if (in.dtype == DType::kInt8)
    portable::upsample_bilinear2d_s8(p, reinterpret_cast<const int8_t*>(in.data), reinterpret_cast<int8_t*>(out.data));
  else
    portable::upsample_bilinear2d_s16(p, reinterpret_cast<const int16_t*>(in.data),
                                      reinterpret_cast<int16_t*>(out.data));
}

}  // namespace

Status prepare_float_upsample_bilinear2d(const OpContext& ctx) { return prepare(ctx, false); }
void run_float_upsample_bilinear2d(const OpContext& ctx) { run(ctx); }
Status prepare_quantized_upsample_bilinear2d(const OpContext& ctx) { return prepare(ctx, true); }
void run_quantized_upsample_bilinear2d(const OpContext& ctx) { run(ctx); }

}  // namespace cortexm::runtime
