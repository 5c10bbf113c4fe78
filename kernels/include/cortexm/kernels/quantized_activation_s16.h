// cortex_m.quantized_activation_s16: any elementwise int16 -> int16 function (symmetric, zero point
// 0 on both sides) through TFLite's int16 lookup table: 513 entries over the whole int16 input
// range (entry i is f at input -32768 + 128 i, the last one closing the last segment), built ahead
// of time with TFLite's LUTPopulate<int16_t> (midpoint correction), and TFLite's lut_lookup linear
// interpolation between the two entries around the input:
//   index = 256 + (x >> 7), offset = x & 127, slope = table[index + 1] - table[index],
//   out = table[index] + ((slope * offset + 64) >> 7).
// TFLite keeps slope in an int16_t, which wraps when neighbouring entries are more than 32767
// apart; here it is an int32, so those tables interpolate too (the output stays between the two
// entries). Every other table gives TFLite's results bit for bit.
#pragma once

#include <cstdint>

#include "cortexm/kernels/status.h"

namespace cortexm {

constexpr int32_t kActivationS16TableSize = 513;

struct ActivationS16Params {
  int64_t count = 0;               // elements
  const int16_t* table = nullptr;  // kActivationS16TableSize entries
};

// The interpolated table value at x (the arithmetic above).
inline int16_t activation_s16_lookup(const int16_t* table, int16_t x) {
  const int32_t index = 256 + (int32_t{x} >> 7);
  const int32_t offset = int32_t{x} & 0x7f;
  const int32_t base = table[index];
  const int32_t slope = int32_t{table[index + 1]} - base;
  return static_cast<int16_t>(base + ((slope * offset + 64) >> 7));
}

Error quantized_activation_s16_prepare(const ActivationS16Params& params);

void quantized_activation_s16(const ActivationS16Params& params, const int16_t* input,
                              int16_t* output);

void quantized_activation_s16_reference(const ActivationS16Params& params, const int16_t* input,
                                        int16_t* output);

}  // namespace cortexm
