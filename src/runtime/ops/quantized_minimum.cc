// QuantizedMinimum: elementwise minimum of two int8 tensors with broadcasting, inputs rescaled as
// quantized_add's (minmax_params.h).
#include "cortexm/kernels/quantized_minimum.h"

#include "runtime/ops/minmax_decode.h"

namespace cortexm::runtime {

Status prepare_quantized_minimum(const OpContext& ctx) {
  MinMaxParams p;
  CORTEXM_RETURN_IF_STATUS(decode_minmax(ctx, &p));
  const Error error = quantized_minimum_prepare(p);
  return error.ok() ? kStatusOk : ctx.fail(error);
}

void run_quantized_minimum(const OpContext& ctx) {
  MinMaxParams p;
  decode_minmax(ctx, &p);
  quantized_minimum(p, reinterpret_cast<const int8_t*>(ctx.input(0).data),
                    reinterpret_cast<const int8_t*>(ctx.input(1).data),
                    reinterpret_cast<int8_t*>(ctx.output().data));
}

}  // namespace cortexm::runtime
