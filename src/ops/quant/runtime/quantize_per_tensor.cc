// QuantizePerTensor / DequantizePerTensor: float32 <-> int8 / int16, elementwise over the bytes
// (input and output share their layout).
#include "cortexm/kernels/quantize_per_tensor.h"

#include "ops/quant/runtime/quantize_codec.h"
#include "runtime/op_context.h"

namespace cortexm::runtime {

namespace {

QuantizeParams decode(const OpContext& ctx, DType quantized) {
  QuantizeParams p;
  program::decode_quantize(*ctx.op.params_as_QuantizeParams(), &p);
  p.dtype = quantized == DType::kInt16 ? QuantDtype::kInt16 : QuantDtype::kInt8;
  return p;
}

Status prepare(const OpContext& ctx, const TensorView& real, const TensorView& quantized) {
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "float tensor", real, DType::kFloat32));
  if (quantized.dtype != DType::kInt8 && quantized.dtype != DType::kInt16)
    return ctx.fail("quantized tensor.dtype", static_cast<int64_t>(quantized.dtype),
                    "must be int8 or int16");
  if (!real.same_layout(quantized))
    return ctx.unsupported("output", 0, "must have the input's shape and layout");
  const Error error = quantize_per_tensor_prepare(decode(ctx, quantized.dtype));
  return error.ok() ? kStatusOk : ctx.fail(error);
}

}  // namespace

Status prepare_quantize_per_tensor(const OpContext& ctx) {
  return prepare(ctx, ctx.input(0), ctx.output());
}

void run_quantize_per_tensor(const OpContext& ctx) {
  const TensorView in = ctx.input(0), out = ctx.output();
  quantize_per_tensor(decode(ctx, out.dtype), reinterpret_cast<const float*>(in.data), out.data,
                      static_cast<size_t>(in.numel()));
}

Status prepare_dequantize_per_tensor(const OpContext& ctx) {
  return prepare(ctx, ctx.output(), ctx.input(0));
}

void run_dequantize_per_tensor(const OpContext& ctx) {
  const TensorView in = ctx.input(0), out = ctx.output();
  dequantize_per_tensor(decode(ctx, in.dtype), in.data, reinterpret_cast<float*>(out.data),
                        static_cast<size_t>(in.numel()));
}

}  // namespace cortexm::runtime
