#include "cortexm/kernels/quantized_activation.h"

namespace cortexm {

void quantized_activation_reference(const ActivationParams& p, const int8_t* input,
                                    int8_t* output) {
  for (int64_t i = 0; i < p.count; ++i) output[i] = p.table[int32_t{input[i]} + 128];
}

}  // namespace cortexm
