// cortex_m.quantized_softmax_s16 (arm_softmax_s16, TFLite's int16 softmax): softmax over each
// contiguous row of symmetric int16 values, int16 output at scale 1/32768 and zero point 0.
// Per row: diff = x - row max, scaled = requantize(diff, input_multiplier, input_shift) (the
// multiplier of s_in / (10 / 65535), so that [-65535, 0] spans exp's [-10, 0]), recentred by
// + 32767 and saturated to int16; exp from the 513-entry exp table with TFLite's interpolation
// (activation_s16_lookup). The sum of exps, shifted so that its top bit is bit 30 and rounded to
// 17 bits, minus 98304 (x = sum - 1 in [0, 1), recentred) and saturated, looks up 1 / (1 + x) in the
// reciprocal table; out = (exp * reciprocal) >> (31 - clz(sum)) rounded half up, clamped to
// [0, 32767]. Where CMSIS-NN keeps that recentred sum in an int16 (wrapping 32768 to -32768 when the
// sum's 18 leading bits are ones), this follows TFLite's reference, which saturates.
#pragma once

#include <cstdint>

#include "cortexm/kernels/status.h"

namespace cortexm {

constexpr int32_t kSoftmaxS16TableSize = 513;
// The sum of row_size exps of at most 32767 stays within int32.
constexpr int32_t kSoftmaxS16MaxRowSize = 65536;

struct SoftmaxS16Params {
  int32_t rows = 1;
  int32_t row_size = 1;          // in [1, kSoftmaxS16MaxRowSize]
  int32_t input_multiplier = 0;  // quantize_multiplier(s_in / (10 / 65535)), in [0, 2^31)
  int32_t input_shift = 0;       // in [-31, 15]: a diff of -65535 shifted left stays in int32
  // TFLite's gen_lut tables (513 entries, Q15): exp over [-10, 0], entries in [0, 32767] with the
  // last two >= 1 (the row maximum's exp, so every sum is >= 1); 1 / (1 + x) over [0, 1].
  const int16_t* exp_table = nullptr;
  const int16_t* reciprocal_table = nullptr;
};

Error quantized_softmax_s16_prepare(const SoftmaxS16Params& params);

// input and output: rows * row_size int16, rows contiguous; output may be input.
void quantized_softmax_s16(const SoftmaxS16Params& params, const int16_t* input, int16_t* output);

void quantized_softmax_s16_reference(const SoftmaxS16Params& params, const int16_t* input,
                                     int16_t* output);

}  // namespace cortexm
