// QuantizedConv2dS16: NHWC int16 input, OHWI int8 weights, optional int64 bias, NHWC int16 output
// (arm_convolve_s16 arithmetic; the Conv2dParams offsets must be 0).
#include "cortexm/kernels/quantized_conv2d_s16.h"

#include "runtime/ops/conv_decode.h"

namespace cortexm::runtime {

namespace {

Conv2dS16Params decode(const OpContext& ctx) {
  const auto* q = ctx.op.params_as_Conv2dParams();
  Conv2dS16Params p;
  p.input = nhwc_dims(ctx.input(0));
  p.filter = dims4_of(ctx.input(1));
  ConvQuantParams unused;
  decode_conv(*q, &p.geometry, &unused);
  p.multipliers = unused.multipliers;
  p.shifts = unused.shifts;
  p.activation_min = q->activation_min();
  p.activation_max = q->activation_max();
  p.output = nhwc_dims(ctx.output());
  return p;
}

Status require_nhwc_int16(const OpContext& ctx, const char* field, const TensorView& t) {
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, field, t, DType::kInt16));
  CORTEXM_RETURN_IF_STATUS(require_rank(ctx, field, t, 4));
  for (int32_t d = 0; d < 4; ++d)
    if (t.shape[d] < 1 || t.shape[d] > INT32_MAX)
      return ctx.fail(field, t.shape[d], "extent must be in [1, 2^31)", d);
  if (!t.is_channels_last())
    return ctx.unsupported(field, 0, "must be laid out channels-last (dim order [0, 2, 3, 1])");
  return kStatusOk;
}

}  // namespace

Status prepare_quantized_conv2d_s16(const OpContext& ctx) {
  CORTEXM_RETURN_IF_STATUS(require_nhwc_int16(ctx, "input", ctx.input(0)));
  const TensorView weights = ctx.input(1);
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "weights", weights, DType::kInt8));
  CORTEXM_RETURN_IF_STATUS(require_rank(ctx, "weights", weights, 4));
  if (!weights.is_contiguous()) return ctx.unsupported("weights", 0, "must be contiguous (OHWI)");
  CORTEXM_RETURN_IF_STATUS(require_nhwc_int16(ctx, "output", ctx.output()));
  for (int32_t d = 0; d < 4; ++d)
    if (weights.shape[d] < 1 || weights.shape[d] > INT32_MAX)
      return ctx.fail("weights.shape", weights.shape[d], "must be in [1, 2^31)", d);
  const auto* params = ctx.op.params_as_Conv2dParams();
  if (params->input_offset() != 0)
    return ctx.fail("params.input_offset", params->input_offset(), "must be 0 (symmetric int16)");
  if (params->output_offset() != 0)
    return ctx.fail("params.output_offset", params->output_offset(), "must be 0 (symmetric int16)");
  CORTEXM_RETURN_IF_STATUS(
      require_requantize(ctx, params->multipliers(), params->shifts(), weights.shape[0]));
  const Conv2dS16Params p = decode(ctx);
  const Dims4 expected = quantized_conv2d_s16_output_dims(p);
  if (expected.n != p.output.n || expected.h != p.output.h || expected.w != p.output.w ||
      p.output.c != p.filter.n)
    return ctx.fail("output.shape", ctx.output().shape[2], "must be the convolution's output shape");
  const Error error = quantized_conv2d_s16_prepare(p);
  if (!error.ok()) return ctx.fail(error);
  if (ctx.has_input(2)) {
    const TensorView bias = ctx.input(2);
    CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "bias", bias, DType::kInt64));
    if (bias.rank != 1 || bias.shape[0] != p.filter.n)
      return ctx.fail("bias.shape", bias.rank == 1 ? bias.shape[0] : bias.rank,
                      "must be [output channels]");
    if (reinterpret_cast<uintptr_t>(bias.data) % 8 != 0)
      return ctx.unsupported("bias", 0, "must be 8-byte aligned");
  }
  return require_scratch(ctx, quantized_conv2d_s16_scratch_size(p, ctx.program.isa()));
}

void run_quantized_conv2d_s16(const OpContext& ctx) {
  const Conv2dS16Params p = decode(ctx);
  quantized_conv2d_s16(p, reinterpret_cast<const int16_t*>(ctx.input(0).data),
                       reinterpret_cast<const int8_t*>(ctx.input(1).data),
                       ctx.has_input(2) ? reinterpret_cast<const int64_t*>(ctx.input(2).data) : nullptr,
                       reinterpret_cast<int16_t*>(ctx.output().data), ctx.scratch());
}

}  // namespace cortexm::runtime
