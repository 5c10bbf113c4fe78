// Float32 layer norm over the trailing `normalized_rank` dims (aten.layer_norm's output): per row
// of row_size = the product of those dims, mean and biased variance in double (two passes), then
//   y = float((x - mean) / sqrt(var + eps) * weight + bias)   (weight 1 / bias 0 when absent).
#pragma once

#include <cstdint>

#include "cortexm/portable/shape.h"

namespace cortexm::portable {

struct LayerNormParams {
  Shape input;
  int32_t normalized_rank = 1;  // in [1, input.rank]
  float eps = 1e-5f;            // finite and >= 0
};

Error layer_norm_prepare(const LayerNormParams& params);

// weight and bias: row_size floats each, or nullptr.
void layer_norm_f32(const LayerNormParams& params, const float* input, const float* weight,
                    const float* bias, float* output);

}  // namespace cortexm::portable
