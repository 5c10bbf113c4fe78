// cortex_m.quantized_activation: any elementwise int8 -> int8 function as a 256-entry lookup table
// built ahead of time (table[x + 128] is f's output for input x).
#pragma once

#include <cstdint>

#include "cortexm/kernels/status.h"

namespace cortexm {

constexpr int32_t kActivationTableSize = 256;

struct ActivationParams {
  int64_t count = 0;              // elements
  const int8_t* table = nullptr;  // kActivationTableSize entries
};

Error quantized_activation_prepare(const ActivationParams& params);

void quantized_activation(const ActivationParams& params, const int8_t* input, int8_t* output);

void quantized_activation_reference(const ActivationParams& params, const int8_t* input,
                                    int8_t* output);

}  // namespace cortexm
