// cortex_m.requantize_s16: requantize with int16 on either side (int16 -> int8, int8 -> int16,
// int16 -> int16), for the boundaries of the int16 regions (the 16x8 front end of Silero).
// As requantize_tensor.h, the centered input is shifted left first so that only the final rounding
// counts: by 20 bits for int8 input (any zero point) and by 15 for int16 input, whose zero point
// must be 0 (symmetric int16, as the 16x8 kernels use):
// out = clamp(requantize((x + input_offset) << left, multiplier, shift) + output_offset) with
// multiplier, shift = quantize_multiplier(s_in / (2^left * s_out)).
#pragma once

#include <cstdint>

#include "cortexm/kernels/requantize_tensor.h"
#include "cortexm/kernels/status.h"

namespace cortexm {

constexpr int32_t kRequantizeS16LeftShift = 15;

struct RequantizeS16Params {
  int64_t size = 0;             // elements
  bool int16_input = true;      // else int8
  bool int16_output = false;    // else int8
  int32_t input_offset = 0;     // -input zero point; 0 for int16 input
  int32_t output_offset = 0;    // +output zero point, in the output dtype's range
  int32_t multiplier = 0;       // s_in / (2^left * s_out) as quantize_multiplier gives it
  int32_t shift = 0;
  int32_t activation_min = -128;
  int32_t activation_max = 127;

  int32_t left_shift() const { return int16_input ? kRequantizeS16LeftShift : kRequantizeLeftShift; }
};

Error requantize_s16_prepare(const RequantizeS16Params& params);

// The overload must match params.int16_input / int16_output.
void requantize_s16(const RequantizeS16Params& params, const int16_t* input, int8_t* output);
void requantize_s16(const RequantizeS16Params& params, const int8_t* input, int16_t* output);
void requantize_s16(const RequantizeS16Params& params, const int16_t* input, int16_t* output);

void requantize_s16_reference(const RequantizeS16Params& params, const int16_t* input,
                              int8_t* output);
void requantize_s16_reference(const RequantizeS16Params& params, const int8_t* input,
                              int16_t* output);
void requantize_s16_reference(const RequantizeS16Params& params, const int16_t* input,
                              int16_t* output);

}  // namespace cortexm
