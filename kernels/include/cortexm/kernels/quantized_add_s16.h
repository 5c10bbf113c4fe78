// cortex_m.quantized_add_s16 (arm_elementwise_add_s16, TFLite's 16x8 add): symmetric int16 inputs
// (zero point 0) with numpy broadcasting. Each input is shifted left by 15 and requantized to a
// common scale, the two are summed, the sum is requantized to the output scale and clamped:
//   out = clamp(requantize(requantize(a << 15, m_a, s_a) + requantize(b << 15, m_b, s_b), m_o, s_o))
// with (m_a, s_a) = quantize_multiplier(s_a / (2 max(s_a, s_b))), likewise b, and
// (m_o, s_o) = quantize_multiplier(2 max(s_a, s_b) / (2^15 s_out)). The output zero point is 0.
// The sum wraps modulo 2^32 (only reachable with multipliers the lowering never makes), as on the
// target.
#pragma once

#include <cstdint>

#include "cortexm/kernels/broadcast.h"

namespace cortexm {

constexpr int32_t kAddS16LeftShift = 15;

struct AddS16Params {
  BroadcastShape shape;
  int32_t lhs_multiplier = 0;
  int32_t lhs_shift = 0;
  int32_t rhs_multiplier = 0;
  int32_t rhs_shift = 0;
  int32_t output_multiplier = 0;
  int32_t output_shift = 0;
  int32_t activation_min = -32768;
  int32_t activation_max = 32767;
};

Error quantized_add_s16_prepare(const AddS16Params& params);

// The variant this build selects: MVE on Helium cores, else scalar (a broadcast side rescaled once
// per run).
void quantized_add_s16(const AddS16Params& params, const int16_t* lhs, const int16_t* rhs,
                       int16_t* output);

void quantized_add_s16_reference(const AddS16Params& params, const int16_t* lhs,
                                 const int16_t* rhs, int16_t* output);

}  // namespace cortexm
