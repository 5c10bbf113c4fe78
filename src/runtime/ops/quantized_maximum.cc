// QuantizedMaximum: elementwise maximum of two int8 tensors with broadcasting, inputs rescaled as
// quantized_add's (minmax_params.h).
#include "cortexm/kernels/quantized_maximum.h"

#include "runtime/ops/minmax_decode.h"

namespace cortexm::runtime {

Status prepare_quantized_maximum(const OpContext& ctx) {
  MinMaxParams p;
  CORTEXM_RETURN_IF_STATUS(decode_minmax(ctx, &p));
  const Error error = quantized_maximum_prepare(p);
  return error.ok() ? kStatusOk : ctx.fail(error);
}

void run_quantized_maximum(const OpContext& ctx) {
  MinMaxParams p;
  decode_minmax(ctx, &p);
  quantized_maximum(p, reinterpret_cast<const int8_t*>(ctx.input(0).data),
                    reinterpret_cast<const int8_t*>(ctx.input(1).data),
                    reinterpret_cast<int8_t*>(ctx.output().data));
}

}  // namespace cortexm::runtime
