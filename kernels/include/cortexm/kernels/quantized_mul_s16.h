// cortex_m.quantized_mul_s16 (arm_elementwise_mul_s16, TFLite's 16x8 mul): symmetric int16 inputs
// (zero point 0) with numpy broadcasting; the exact product (|a * b| <= 2^30) is requantized and
// clamped: out = clamp(requantize(a * b, m, s)) with (m, s) = quantize_multiplier(s_a s_b / s_out).
// The output zero point is 0.
#pragma once

#include <cstdint>

#include "cortexm/kernels/broadcast.h"

namespace cortexm {

struct MulS16Params {
  BroadcastShape shape;
  int32_t output_multiplier = 0;
  int32_t output_shift = 0;
  int32_t activation_min = -32768;
  int32_t activation_max = 32767;
};

Error quantized_mul_s16_prepare(const MulS16Params& params);

// The variant this build selects: MVE on Helium cores, else scalar.
void quantized_mul_s16(const MulS16Params& params, const int16_t* lhs, const int16_t* rhs,
                       int16_t* output);

void quantized_mul_s16_reference(const MulS16Params& params, const int16_t* lhs,
                                 const int16_t* rhs, int16_t* output);

}  // namespace cortexm
