// FloatPool2d (float fallback): aten.max_pool2d / avg_pool2d / adaptive_avg_pool2d through the
// portable kernels the interpreter also runs, on contiguous NCHW / CHW float32 tensors.
#include "cortexm/portable/pool2d.h"

#include "ops/pool/runtime/float_pool2d_codec.h"
#include "runtime/ops/portable_layout.h"

namespace cortexm::runtime {

namespace {

portable::AvgPool2dParams decode(const OpContext& ctx) {
  portable::AvgPool2dParams p;
  program::decode_float_pool2d(*ctx.op.params_as_FloatPool2dParams(), &p);
  p.pool.input = logical_shape(ctx.input(0));
  return p;
}

// The adaptive pool's output size is the output tensor's last two dims.
portable::AdaptiveAvgPool2dParams adaptive(const OpContext& ctx) {
  const TensorView out = ctx.output();
  portable::AdaptiveAvgPool2dParams p;
  p.input = logical_shape(ctx.input(0));
  p.out_h = out.rank >= 2 ? out.shape[out.rank - 2] : 0;
  p.out_w = out.rank >= 2 ? out.shape[out.rank - 1] : 0;
  return p;
}

}  // namespace

Status prepare_float_pool2d(const OpContext& ctx) {
  CORTEXM_RETURN_IF_STATUS(require_contiguous_float(ctx));
  const fb::Pool2dKind kind = ctx.op.params_as_FloatPool2dParams()->kind();
  portable::Shape out;
  Error error;
  switch (kind) {
    case fb::Pool2dKind_Max:
      error = portable::max_pool2d_prepare(decode(ctx).pool, &out);
      break;
    case fb::Pool2dKind_Avg:
      error = portable::avg_pool2d_prepare(decode(ctx), &out);
      break;
    case fb::Pool2dKind_AdaptiveAvg:
      error = portable::adaptive_avg_pool2d_prepare(adaptive(ctx), &out);
      break;
    default:
      return ctx.fail("params.kind", kind, "must be a known Pool2dKind");
  }
  if (!error.ok()) return ctx.fail(error);
  return require_output_shape(ctx, out);
}

void run_float_pool2d(const OpContext& ctx) {
  const auto* in = reinterpret_cast<const float*>(ctx.input(0).data);
  auto* out = reinterpret_cast<float*>(ctx.output().data);
  switch (ctx.op.params_as_FloatPool2dParams()->kind()) {
    case fb::Pool2dKind_Max:
      portable::max_pool2d_f32(decode(ctx).pool, in, out);
      break;
    case fb::Pool2dKind_Avg:
      portable::avg_pool2d_f32(decode(ctx), in, out);
      break;
    default:
      portable::adaptive_avg_pool2d_f32(adaptive(ctx), in, out);
  }
}

}  // namespace cortexm::runtime
