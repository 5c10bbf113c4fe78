// Parameters of cortex_m.quantized_maximum / quantized_minimum. Inputs may have other qparams than
// the output: as in quantized_add, each input is offset, shifted left by 20 and requantized to a
// common scale (twice the larger input scale), the two are compared there (20 bits finer than
// the inputs), and the winner is requantized once to the output, with quantized_add's rounding.
// Quantizing is monotone, so with equal qparams everywhere this is exactly max / min of the raw
// values.
#pragma once

#include <cstdint>

#include "cortexm/kernels/broadcast.h"

namespace cortexm {

constexpr int32_t kMinMaxLeftShift = 20;

struct MinMaxParams {
  BroadcastShape shape;
  int32_t lhs_offset = 0;  // -self zero point
  int32_t lhs_multiplier = 0;
  int32_t lhs_shift = 0;
  int32_t rhs_offset = 0;  // -other zero point
  int32_t rhs_multiplier = 0;
  int32_t rhs_shift = 0;
  int32_t output_offset = 0;  // +output zero point
  int32_t output_multiplier = 0;
  int32_t output_shift = 0;
  int32_t activation_min = -128;
  int32_t activation_max = 127;
};

// Shared by both ops' prepare steps.
Error minmax_prepare(const MinMaxParams& params);

}  // namespace cortexm
