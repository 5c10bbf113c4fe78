// QuantizedDepthwiseConv2d: NHWC int8 input, IHWO int8 weights [1, KH, KW, C * m], int32 bias.
#include "cortexm/kernels/quantized_depthwise_conv2d.h"

#include "runtime/ops/conv_decode.h"

namespace cortexm::runtime {

namespace {

DepthwiseConv2dParams decode(const OpContext& ctx) {
  DepthwiseConv2dParams p;
  const auto* params = ctx.op.params_as_Conv2dParams();
  p.input = nhwc_dims(ctx.input(0));
  p.filter = dims4_of(ctx.input(1));
  p.depth_multiplier = params->depth_multiplier();
  decode_conv(*params, &p.geometry, &p.quant);
  p.output = nhwc_dims(ctx.output());
  return p;
}

}  // namespace

Status prepare_quantized_depthwise_conv2d(const OpContext& ctx) {
  CORTEXM_RETURN_IF_STATUS(require_nhwc_int8(ctx, "input", ctx.input(0)));
  const TensorView weights = ctx.input(1);
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "weights", weights, DType::kInt8));
  CORTEXM_RETURN_IF_STATUS(require_rank(ctx, "weights", weights, 4));
  if (!weights.is_contiguous()) return ctx.unsupported("weights", 0, "must be contiguous (IHWO)");
  for (int32_t d = 0; d < 4; ++d)
    if (weights.shape[d] < 1 || weights.shape[d] > INT32_MAX)
      return ctx.fail("weights.shape", weights.shape[d], "must be in [1, 2^31)", d);
  CORTEXM_RETURN_IF_STATUS(require_nhwc_int8(ctx, "output", ctx.output()));
  const auto* params = ctx.op.params_as_Conv2dParams();
  const int64_t channels = ctx.output().shape[1];
  if (weights.shape[3] != channels)
    return ctx.fail("weights.shape", weights.shape[3], "must end with the output channels", 3);
  CORTEXM_RETURN_IF_STATUS(require_requantize(ctx, params->multipliers(), params->shifts(), channels));
  const DepthwiseConv2dParams p = decode(ctx);
  const Dims4 expected = quantized_depthwise_conv2d_output_dims(p);
  if (expected.n != p.output.n || expected.h != p.output.h || expected.w != p.output.w ||
      expected.c != p.output.c)
    return ctx.fail("output.shape", ctx.output().shape[2], "must be the convolution's output shape");
  const Error error = quantized_depthwise_conv2d_prepare(p);
  if (!error.ok()) return ctx.fail(error);
  CORTEXM_RETURN_IF_STATUS(require_bias(ctx, 2, channels));
  return require_scratch(ctx, quantized_depthwise_conv2d_scratch_size(p, ctx.program.isa()));
}

void run_quantized_depthwise_conv2d(const OpContext& ctx) {
  const DepthwiseConv2dParams p = decode(ctx);
  quantized_depthwise_conv2d(
      p, reinterpret_cast<const int8_t*>(ctx.input(0).data),
      reinterpret_cast<const int8_t*>(ctx.input(1).data),
      ctx.has_input(2) ? reinterpret_cast<const int32_t*>(ctx.input(2).data) : nullptr,
      reinterpret_cast<int8_t*>(ctx.output().data), ctx.scratch());
}

}  // namespace cortexm::runtime
