#include "cortexm/kernels/quantized_activation_s16.h"

namespace cortexm {

CORTEXM_PREPARE_STEP Error quantized_activation_s16_prepare(const ActivationS16Params& p) {
  if (p.count < 0) return invalid("count", p.count, "must be >= 0");
  if (p.table == nullptr) return invalid("table", 0, "must be given (513 int16 entries)");
  return kOk;
}

// Two independent lookups per step keep both table loads in flight.
void quantized_activation_s16(const ActivationS16Params& p, const int16_t* input,
                              int16_t* output) {
  const int16_t* table = p.table;
  int64_t i = 0;
  for (; i + 2 <= p.count; i += 2) {
    const int16_t a = activation_s16_lookup(table, input[i]);
    const int16_t b = activation_s16_lookup(table, input[i + 1]);
    output[i] = a;
    output[i + 1] = b;
  }
  for (; i < p.count; ++i) output[i] = activation_s16_lookup(table, input[i]);
}

}  // namespace cortexm
