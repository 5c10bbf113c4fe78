// QuantizedConv2d: NHWC int8 input, OHWI int8 weights, optional int32 bias.
#include "cortexm/kernels/quantized_conv2d.h"

#include "runtime/ops/conv_decode.h"

namespace cortexm::runtime {

namespace {

Conv2dParams decode(const OpContext& ctx) {
  Conv2dParams p;
  p.input = nhwc_dims(ctx.input(0));
  p.filter = dims4_of(ctx.input(1));
  decode_conv(*ctx.op.params_as_Conv2dParams(), &p.geometry, &p.quant);
  p.output = nhwc_dims(ctx.output());
  return p;
}

}  // namespace

Status prepare_quantized_conv2d(const OpContext& ctx) {
  CORTEXM_RETURN_IF_STATUS(require_nhwc_int8(ctx, "input", ctx.input(0)));
  const TensorView weights = ctx.input(1);
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "weights", weights, DType::kInt8));
  CORTEXM_RETURN_IF_STATUS(require_rank(ctx, "weights", weights, 4));
  if (!weights.is_contiguous()) return ctx.unsupported("weights", 0, "must be contiguous (OHWI)");
  CORTEXM_RETURN_IF_STATUS(require_nhwc_int8(ctx, "output", ctx.output()));
  for (int32_t d = 0; d < 4; ++d)
    if (weights.shape[d] < 1 || weights.shape[d] > INT32_MAX)
      return ctx.fail("weights.shape", weights.shape[d], "must be in [1, 2^31)", d);
  const auto* params = ctx.op.params_as_Conv2dParams();
  CORTEXM_RETURN_IF_STATUS(
      require_requantize(ctx, params->multipliers(), params->shifts(), weights.shape[0]));
  const Conv2dParams p = decode(ctx);
  const Dims4 expected = quantized_conv2d_output_dims(p);
  if (expected.n != p.output.n || expected.h != p.output.h || expected.w != p.output.w ||
      p.output.c != p.filter.n)
    return ctx.fail("output.shape", ctx.output().shape[2], "must be the convolution's output shape");
  const Error error = quantized_conv2d_prepare(p);
  if (!error.ok()) return ctx.fail(error);
  CORTEXM_RETURN_IF_STATUS(require_bias(ctx, 2, p.filter.n));
  return require_scratch(ctx, quantized_conv2d_scratch_size(p, ctx.program.isa()));
}

void run_quantized_conv2d(const OpContext& ctx) {
  const Conv2dParams p = decode(ctx);
  quantized_conv2d(p, reinterpret_cast<const int8_t*>(ctx.input(0).data),
                   reinterpret_cast<const int8_t*>(ctx.input(1).data),
                   ctx.has_input(2) ? reinterpret_cast<const int32_t*>(ctx.input(2).data) : nullptr,
                   reinterpret_cast<int8_t*>(ctx.output().data), ctx.scratch());
}

}  // namespace cortexm::runtime
