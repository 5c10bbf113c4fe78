// QuantizedTransposeConv2d: NHWC int8 input, OHWI int8 weights [C_out, KH, KW, C_in], optional
// int32 bias; groups 1, dilation 1. Scratch holds the int16 column of one output pixel.
#include "cortexm/kernels/quantized_transpose_conv2d.h"

#include "runtime/ops/conv_decode.h"

namespace cortexm::runtime {

namespace {

TransposeConv2dParams decode(const OpContext& ctx) {
  const auto* c = ctx.op.params_as_Conv2dParams();
  TransposeConv2dParams p;
  p.input = nhwc_dims(ctx.input(0));
  p.filter = dims4_of(ctx.input(1));
  p.output = nhwc_dims(ctx.output());
  ConvGeometry geometry;
  decode_conv(*c, &geometry, &p.quant);
  p.stride_h = geometry.stride_h;
  p.stride_w = geometry.stride_w;
  p.padding = geometry.padding;
  p.output_padding_h = c->output_padding_h();
  p.output_padding_w = c->output_padding_w();
  return p;
}

}  // namespace

Status prepare_quantized_transpose_conv2d(const OpContext& ctx) {
  CORTEXM_RETURN_IF_STATUS(require_nhwc_int8(ctx, "input", ctx.input(0)));
  const TensorView weights = ctx.input(1);
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "weights", weights, DType::kInt8));
  CORTEXM_RETURN_IF_STATUS(require_rank(ctx, "weights", weights, 4));
  if (!weights.is_contiguous()) return ctx.unsupported("weights", 0, "must be contiguous (OHWI)");
  for (int32_t d = 0; d < 4; ++d)
    if (weights.shape[d] < 1 || weights.shape[d] > INT32_MAX)
      return ctx.fail("weights.shape", weights.shape[d], "must be in [1, 2^31)", d);
  CORTEXM_RETURN_IF_STATUS(require_nhwc_int8(ctx, "output", ctx.output()));
  const auto* params = ctx.op.params_as_Conv2dParams();
  if (params->dilation_h() != 1) return ctx.fail("params.dilation_h", params->dilation_h(), "must be 1");
  if (params->dilation_w() != 1) return ctx.fail("params.dilation_w", params->dilation_w(), "must be 1");
  if (params->depth_multiplier() != 1)
    return ctx.fail("params.depth_multiplier", params->depth_multiplier(), "must be 1");
  CORTEXM_RETURN_IF_STATUS(
      require_requantize(ctx, params->multipliers(), params->shifts(), weights.shape[0]));
  const TransposeConv2dParams p = decode(ctx);
  const Error error = quantized_transpose_conv2d_prepare(p);
  if (!error.ok()) return ctx.fail(error);
  CORTEXM_RETURN_IF_STATUS(require_bias(ctx, 2, p.filter.n));
  return require_scratch(ctx, quantized_transpose_conv2d_scratch_size(p, ctx.program.isa()));
}

void run_quantized_transpose_conv2d(const OpContext& ctx) {
  quantized_transpose_conv2d(
      decode(ctx), reinterpret_cast<const int8_t*>(ctx.input(0).data),
      reinterpret_cast<const int8_t*>(ctx.input(1).data),
      ctx.has_input(2) ? reinterpret_cast<const int32_t*>(ctx.input(2).data) : nullptr,
      reinterpret_cast<int8_t*>(ctx.output().data), ctx.scratch());
}

}  // namespace cortexm::runtime
