// QuantizedActivation: out = table[in + 128] over the bytes; the table is input 1, a constant
// int8 [256]. QuantizedActivationS16: each int16 input through the 513-entry int16 table with
// TFLite's interpolation (quantized_activation_s16.h); the table is a constant int16 [513]. Input
// and output share their layout. One prepare and run for both.
#include "cortexm/kernels/quantized_activation.h"
#include "cortexm/kernels/quantized_activation_s16.h"
#include "runtime/op_context.h"

namespace cortexm::runtime {

namespace {

template <class T>
constexpr DType kDTypeOf = sizeof(T) == 1 ? DType::kInt8 : DType::kInt16;

template <class P, class T>
P decode(const OpContext& ctx) {
  P p;
  p.count = ctx.input(0).numel();
  p.table = reinterpret_cast<const T*>(ctx.input(1).data);
  return p;
}

template <class P, class T, int32_t kTableSize, Error (*Prepare)(const P&)>
Status prepare_activation(const OpContext& ctx, const char* table_shape) {
  const TensorView in = ctx.input(0), table = ctx.input(1), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "input", in, kDTypeOf<T>));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "table", table, kDTypeOf<T>));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "output", out, kDTypeOf<T>));
  if (table.rank != 1 || table.shape[0] != kTableSize)
    return ctx.fail("table.shape", table.rank == 1 ? table.shape[0] : table.rank, table_shape);
  if (!in.same_layout(out)) return ctx.unsupported("output", 0, "must have the input's shape and layout");
  if (!table.data) return ctx.unsupported("table", 0, "must be a constant");
  const Error error = Prepare(decode<P, T>(ctx));
  return error.ok() ? kStatusOk : ctx.fail(error);
}

template <class P, class T, void (*Run)(const P&, const T*, T*)>
void run_activation(const OpContext& ctx) {
  Run(decode<P, T>(ctx), reinterpret_cast<const T*>(ctx.input(0).data),
      reinterpret_cast<T*>(ctx.output().data));
}

}  // namespace

Status prepare_quantized_activation(const OpContext& ctx) {
  return prepare_activation<ActivationParams, int8_t, kActivationTableSize, quantized_activation_prepare>(
      ctx, "must be [256]");
}

void run_quantized_activation(const OpContext& ctx) {
  run_activation<ActivationParams, int8_t, quantized_activation>(ctx);
}

Status prepare_quantized_activation_s16(const OpContext& ctx) {
  return prepare_activation<ActivationS16Params, int16_t, kActivationS16TableSize,
                            quantized_activation_s16_prepare>(ctx, "must be [513]");
}

void run_quantized_activation_s16(const OpContext& ctx) {
  run_activation<ActivationS16Params, int16_t, quantized_activation_s16>(ctx);
}

}  // namespace cortexm::runtime
