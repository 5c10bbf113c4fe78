// cortex_m.requantize: int8 -> int8 at other qparams. As quantized_add's input stage, the
// centered input is shifted left by 20 first, so the doubling high multiply keeps the fraction
// and only the final rounding counts (within half an LSB of s_in / s_out exactly; TFLite's
// Requantize multiplies the bare 8-bit value and can be 0.75 LSB off):
// out = clamp(requantize((x + input_offset) << 20, multiplier, shift) + output_offset) with
// multiplier, shift = quantize_multiplier(s_in / (2^20 * s_out)).
// The kernel is requantize_tensor (requantize() is the scalar arithmetic of requantize.h).
#pragma once

#include <cstdint>

#include "cortexm/kernels/status.h"

namespace cortexm {

constexpr int32_t kRequantizeLeftShift = 20;

struct RequantizeParams {
  int64_t size = 0;            // elements
  int32_t input_offset = 0;    // -input zero point
  int32_t output_offset = 0;   // +output zero point
  int32_t multiplier = 0;      // s_in / (2^20 * s_out) as quantize_multiplier gives it
  int32_t shift = 0;
  int32_t activation_min = -128;
  int32_t activation_max = 127;
};

Error requantize_tensor_prepare(const RequantizeParams& params);

void requantize_tensor(const RequantizeParams& params, const int8_t* input, int8_t* output);

void requantize_tensor_reference(const RequantizeParams& params, const int8_t* input,
                                 int8_t* output);

}  // namespace cortexm
