// cortex_m.quantized_mean: int8 mean over a contiguous block of dims, TFLite Micro's MEAN (the
// reference reduce's QuantizedMeanOrSum). The input is seen as [outer, reduce, inner]
// (reduce = the product of the reduced dims);
// out[o, i] = clamp(requantize(sum_r (x[o, r, i] + input_offset), multiplier, shift) + output_offset)
// with (multiplier, shift) = mean_multiplier(quantize_multiplier(s_in / s_out), reduce): TFLM folds
// 1/reduce into the multiplier with integer arithmetic, for equal qparams too.
// quantized_mean_s16: the same arithmetic over symmetric int16 (TFLM's MEAN for int16 runs the same
// QuantizedMeanOrSum with int32 sums): offsets 0, reduce <= 65535, an int16 activation range.
#pragma once

#include "cortexm/kernels/conv_params.h"
#include "cortexm/kernels/requantize.h"

namespace cortexm {

struct MeanParams {
  int32_t outer = 1;
  int32_t reduce = 1;
  int32_t inner = 1;
  int32_t input_offset = 0;   // -input zero point, in [-127, 128]
  int32_t output_offset = 0;  // +output zero point
  int32_t multiplier = 0;  // mean_multiplier(quantize_multiplier(s_in / s_out), reduce)
  int32_t shift = 0;
  int32_t activation_min = -128;
  int32_t activation_max = 127;
};

// TFLM's fold of 1/count into the (multiplier, shift) of s_in / s_out:
// k = min(floor(log2 count), 32, 31 + shift), ((multiplier << k) / count truncated, shift - k).
// count >= 1.
QuantizedMultiplier mean_multiplier(QuantizedMultiplier s_in_over_s_out, int64_t count);

Error quantized_mean_prepare(const MeanParams& params);

// Bytes of scratch the kernel for `isa` needs (4-byte aligned): one int32 sum per inner element.
size_t quantized_mean_scratch_size(const MeanParams& params, Isa isa);

void quantized_mean(const MeanParams& params, const int8_t* input, int8_t* output, void* scratch);

void quantized_mean_reference(const MeanParams& params, const int8_t* input, int8_t* output);

Error quantized_mean_s16_prepare(const MeanParams& params);

// Scratch: quantized_mean_scratch_size.
void quantized_mean_s16(const MeanParams& params, const int16_t* input, int16_t* output,
                        void* scratch);

void quantized_mean_s16_reference(const MeanParams& params, const int16_t* input, int16_t* output);

}  // namespace cortexm
