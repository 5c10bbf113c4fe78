#include "cortexm/kernels/quantized_activation.h"

namespace cortexm {

CORTEXM_PREPARE_STEP Error quantized_activation_prepare(const ActivationParams& p) {
  if (p.count < 0) return invalid("count", p.count, "must be >= 0");
  if (p.table == nullptr) return invalid("table", 0, "must be given (256 int8 entries)");
  return kOk;
}

// Indexing from the table's middle makes the int8 value the index; four lookups per step.
void quantized_activation(const ActivationParams& p, const int8_t* input, int8_t* output) {
  const int8_t* centre = p.table + 128;
  int64_t i = 0;
  for (; i + 4 <= p.count; i += 4) {
    const int8_t a = centre[input[i]], b = centre[input[i + 1]];
    const int8_t c = centre[input[i + 2]], d = centre[input[i + 3]];
    output[i] = a;
    output[i + 1] = b;
    output[i + 2] = c;
    output[i + 3] = d;
  }
  for (; i < p.count; ++i) output[i] = centre[input[i]];
}

}  // namespace cortexm
