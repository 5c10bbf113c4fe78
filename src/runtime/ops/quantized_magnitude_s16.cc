// QuantizedMagnitudeS16: |z| of int16 real and imaginary parts (one layout) to an int8 or int16
// output of the same layout; RequantizeParams without the input offset (quantized_magnitude_s16.h).
#include "cortexm/kernels/quantized_magnitude_s16.h"

#include "runtime/op_context.h"

namespace cortexm::runtime {

namespace {

MagnitudeParams decode(const OpContext& ctx) {
  const auto* q = ctx.op.params_as_RequantizeParams();
  MagnitudeParams p;
  p.size = ctx.input(0).numel();
  p.int8_output = ctx.output().dtype == DType::kInt8;
  p.multiplier = q->multiplier();
  p.shift = q->shift();
  p.output_offset = q->output_offset();
  p.activation_min = q->activation_min();
  p.activation_max = q->activation_max();
  return p;
}

}  // namespace

Status prepare_quantized_magnitude_s16(const OpContext& ctx) {
  const TensorView re = ctx.input(0), im = ctx.input(1), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "real", re, DType::kInt16));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "imag", im, DType::kInt16));
  if (out.dtype != DType::kInt8 && out.dtype != DType::kInt16)
    return ctx.unsupported("output", 0, "must be int8 or int16");
  if (!re.same_layout(im)) return ctx.unsupported("imag", 0, "must have the real part's shape and layout");
  if (!re.same_layout(out)) return ctx.unsupported("output", 0, "must have the inputs' shape and layout");
  if (ctx.op.params_as_RequantizeParams()->input_offset() != 0)
    return ctx.fail("params.input_offset", ctx.op.params_as_RequantizeParams()->input_offset(),
                    "must be 0 (symmetric int16)");
  const Error error = quantized_magnitude_s16_prepare(decode(ctx));
  return error.ok() ? kStatusOk : ctx.fail(error);
}

void run_quantized_magnitude_s16(const OpContext& ctx) {
  const MagnitudeParams p = decode(ctx);
  const auto* re = reinterpret_cast<const int16_t*>(ctx.input(0).data);
  const auto* im = reinterpret_cast<const int16_t*>(ctx.input(1).data);
  if (p.int8_output) {
    quantized_magnitude_s16(p, re, im, reinterpret_cast<int8_t*>(ctx.output().data));
  } else {
    quantized_magnitude_s16(p, re, im, reinterpret_cast<int16_t*>(ctx.output().data));
  }
}

}  // namespace cortexm::runtime
