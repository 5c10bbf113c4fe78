// The prepare checks quantized_linear and quantized_linear_s16 share (kernels/src only).
#pragma once

#include "cortexm/kernels/status.h"

namespace cortexm {

inline Error check_linear_dims(int32_t batches, int32_t input_features, int32_t output_features) {
  if (batches < 1) return invalid("batches", batches, "must be >= 1");
  if (input_features < 1) return invalid("input_features", input_features, "must be >= 1");
  if (output_features < 1) return invalid("output_features", output_features, "must be >= 1");
  return kOk;
}

// One multiplier per tensor or one per output feature.
inline Error check_multiplier_count(int32_t num_multipliers, int32_t output_features) {
  if (num_multipliers != 1 && num_multipliers != output_features)
    return invalid("requantize_multipliers", num_multipliers, "length must be 1 or output_features");
  return kOk;
}

}  // namespace cortexm
