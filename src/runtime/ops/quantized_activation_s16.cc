// QuantizedActivationS16: each int16 input through the 513-entry int16 table with TFLite's
// interpolation (quantized_activation_s16.h); input and output share their layout; the table is
// input 1, a constant int16 [513].
#include "cortexm/kernels/quantized_activation_s16.h"

#include "runtime/op_context.h"

namespace cortexm::runtime {

Status prepare_quantized_activation_s16(const OpContext& ctx) {
  const TensorView in = ctx.input(0), table = ctx.input(1), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "input", in, DType::kInt16));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "table", table, DType::kInt16));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "output", out, DType::kInt16));
  if (table.rank != 1 || table.shape[0] != kActivationS16TableSize)
    return ctx.fail("table.shape", table.rank == 1 ? table.shape[0] : table.rank, "must be [513]");
  if (!in.same_layout(out)) return ctx.unsupported("output", 0, "must have the input's shape and layout");
  if (!table.data) return ctx.unsupported("table", 0, "must be a constant");
  ActivationS16Params p;
  p.count = in.numel();
  p.table = reinterpret_cast<const int16_t*>(table.data);
  const Error error = quantized_activation_s16_prepare(p);
  return error.ok() ? kStatusOk : ctx.fail(error);
}

void run_quantized_activation_s16(const OpContext& ctx) {
  ActivationS16Params p;
  p.count = ctx.input(0).numel();
  p.table = reinterpret_cast<const int16_t*>(ctx.input(1).data);
  quantized_activation_s16(p, reinterpret_cast<const int16_t*>(ctx.input(0).data),
                           reinterpret_cast<int16_t*>(ctx.output().data));
}

}  // namespace cortexm::runtime
