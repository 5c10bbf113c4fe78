// cortex_m.requantize: int8 -> int8 at other qparams (TFLite's int8 Requantize):
// out = clamp(requantize(x + input_offset, multiplier, shift) + output_offset), one rounding.
// The kernel is requantize_tensor (requantize() is the scalar arithmetic of requantize.h).
#pragma once

#include <cstdint>

#include "cortexm/kernels/status.h"

namespace cortexm {

struct RequantizeParams {
  int64_t size = 0;            // elements
  int32_t input_offset = 0;    // -input zero point
  int32_t output_offset = 0;   // +output zero point
  int32_t multiplier = 0;      // s_in / s_out as quantize_multiplier gives it
  int32_t shift = 0;
  int32_t activation_min = -128;
  int32_t activation_max = 127;
};

Error requantize_tensor_prepare(const RequantizeParams& params);

void requantize_tensor(const RequantizeParams& params, const int8_t* input, int8_t* output);

void requantize_tensor_reference(const RequantizeParams& params, const int8_t* input,
                                 int8_t* output);

}  // namespace cortexm
