// cortex_m.quantized_magnitude_s16: |z| = sqrt(re^2 + im^2) of int16 real and imaginary parts at
// one scale s_in (zero point 0), e.g. Silero's STFT halves, to int16 or int8 at (s_out, zp_out):
//   sum  = re^2 + im^2 in 64 bits (exact, < 2^31)
//   root = round(sqrt(sum * 2^30)), |z| with 15 fraction bits, rounded to the nearest integer by
//          an exact integer square root (no ties: sum * 2^30 is an integer)
//   out  = clamp(requantize(root, multiplier, shift) + output_offset) with
//          multiplier, shift = quantize_multiplier(s_in / (2^15 * s_out)) (requantize.h).
// The result is within 0.5 LSB of |z| * s_in / s_out plus the root's 2^-16 * s_in / s_out.
#pragma once

#include <cstdint>

#include "cortexm/kernels/status.h"

namespace cortexm {

constexpr int32_t kMagnitudeFractionBits = 15;

struct MagnitudeParams {
  int64_t size = 0;           // elements of each input and of the output
  bool int8_output = false;   // int8 output (offset and range in int8), else int16
  int32_t multiplier = 0;     // s_in / (2^15 * s_out) as quantize_multiplier gives it
  int32_t shift = 0;          // in [-31, 30]
  int32_t output_offset = 0;  // + output zero point
  int32_t activation_min = -32768;
  int32_t activation_max = 32767;
};

Error quantized_magnitude_s16_prepare(const MagnitudeParams& params);

// round(sqrt(n)), exactly (halves cannot occur for integer n).
uint32_t rounded_sqrt(uint64_t n);

// params.int8_output selects which of the two the caller may use.
void quantized_magnitude_s16(const MagnitudeParams& params, const int16_t* real,
                             const int16_t* imag, int16_t* output);
void quantized_magnitude_s16(const MagnitudeParams& params, const int16_t* real,
                             const int16_t* imag, int8_t* output);

// Plain-loop references the kernels must match bit for bit.
void quantized_magnitude_s16_reference(const MagnitudeParams& params, const int16_t* real,
                                       const int16_t* imag, int16_t* output);
void quantized_magnitude_s16_reference(const MagnitudeParams& params, const int16_t* real,
                                       const int16_t* imag, int8_t* output);

}  // namespace cortexm
