// RequantizeS16: int16 on either side (requantize_s16.h); the dtypes are the tensors', input and
// output share their layout.
#include "cortexm/kernels/requantize_s16.h"

#include "ops/quant/runtime/requantize_codec.h"
#include "runtime/op_context.h"

namespace cortexm::runtime {

namespace {

RequantizeS16Params decode(const OpContext& ctx) {
  RequantizeS16Params p;
  p.size = ctx.input(0).numel();
  p.int16_input = ctx.input(0).dtype == DType::kInt16;
  p.int16_output = ctx.output().dtype == DType::kInt16;
  program::decode_requantize(*ctx.op.params_as_RequantizeParams(), &p);
  return p;
}

}  // namespace

Status prepare_requantize_s16(const OpContext& ctx) {
  const TensorView in = ctx.input(0), out = ctx.output();
  if (in.dtype != DType::kInt8 && in.dtype != DType::kInt16)
    return ctx.unsupported("input", 0, "must be int8 or int16");
  if (out.dtype != DType::kInt8 && out.dtype != DType::kInt16)
    return ctx.unsupported("output", 0, "must be int8 or int16");
  if (!in.same_layout(out)) return ctx.unsupported("output", 0, "must have the input's shape and layout");
  const Error error = requantize_s16_prepare(decode(ctx));
  return error.ok() ? kStatusOk : ctx.fail(error);
}

void run_requantize_s16(const OpContext& ctx) {
  const RequantizeS16Params p = decode(ctx);
  const void* in = ctx.input(0).data;
  void* out = ctx.output().data;
  if (!p.int16_input) {
    requantize_s16(p, static_cast<const int8_t*>(in), static_cast<int16_t*>(out));
  } else if (p.int16_output) {
    requantize_s16(p, static_cast<const int16_t*>(in), static_cast<int16_t*>(out));
  } else {
    requantize_s16(p, static_cast<const int16_t*>(in), static_cast<int8_t*>(out));
  }
}

}  // namespace cortexm::runtime
