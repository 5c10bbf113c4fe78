// QuantizedActivation: out = table[in + 128] over the bytes (input and output share their layout);
// the table is input 1, a constant int8 [256].
#include "cortexm/kernels/quantized_activation.h"

#include "runtime/op_context.h"

namespace cortexm::runtime {

Status prepare_quantized_activation(const OpContext& ctx) {
  const TensorView in = ctx.input(0), table = ctx.input(1), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "input", in, DType::kInt8));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "table", table, DType::kInt8));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "output", out, DType::kInt8));
  if (table.rank != 1 || table.shape[0] != kActivationTableSize)
    return ctx.fail("table.shape", table.rank == 1 ? table.shape[0] : table.rank, "must be [256]");
  if (!in.same_layout(out)) return ctx.unsupported("output", 0, "must have the input's shape and layout");
  if (!table.data) return ctx.unsupported("table", 0, "must be a constant");
  ActivationParams p;
  p.count = in.numel();
  p.table = reinterpret_cast<const int8_t*>(table.data);
  const Error error = quantized_activation_prepare(p);
  return error.ok() ? kStatusOk : ctx.fail(error);
}

void run_quantized_activation(const OpContext& ctx) {
  ActivationParams p;
  p.count = ctx.input(0).numel();
  p.table = reinterpret_cast<const int8_t*>(ctx.input(1).data);
  quantized_activation(p, reinterpret_cast<const int8_t*>(ctx.input(0).data),
                       reinterpret_cast<int8_t*>(ctx.output().data));
}

}  // namespace cortexm::runtime
