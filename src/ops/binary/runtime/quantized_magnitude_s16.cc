// QuantizedMagnitudeS16: |z| of int16 real and imaginary parts (one layout) to an int8 or int16
// output of the same layout; RequantizeParams without the input offset (quantized_magnitude_s16.h).
#include "cortexm/kernels/quantized_magnitude_s16.h"

#include "ops/quant/runtime/requantize_codec.h"
#include "runtime/op_context.h"

namespace cortexm::runtime {

namespace {

MagnitudeParams decode(const OpContext& ctx, program::NonzeroOffset* bad = nullptr) {
  MagnitudeParams p;
  p.size = ctx.input(0).numel();
  p.int8_output = ctx.output().dtype == DType::kInt8;
  const program::NonzeroOffset stored = program::decode_requantize(*ctx.op.params_as_RequantizeParams(), &p);
  if (bad) *bad = stored;
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
  program::NonzeroOffset bad;
  const MagnitudeParams p = decode(ctx, &bad);
  if (bad.field) return ctx.fail(bad.field, bad.value, "must be 0 (symmetric int16)");
  const Error error = quantized_magnitude_s16_prepare(p);
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
