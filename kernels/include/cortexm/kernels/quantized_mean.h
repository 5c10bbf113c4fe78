// cortex_m.quantized_mean: int8 mean over a contiguous block of dims. The input is seen as
// [outer, reduce, inner] (reduce = the product of the reduced dims);
// out[o, i] = clamp(requantize(sum_r (x[o, r, i] + input_offset), multiplier, shift) + output_offset)
// with multiplier = s_in / (reduce * s_out): TFLite's 4-D integer Mean scale, with the input zero
// point taken out of the sum exactly (TFLite folds it into a float bias truncated to an integer)
// and one requantize (TFLite's newer reduce.cc divides by the count after requantizing, a second
// rounding).
#pragma once

#include "cortexm/kernels/conv_params.h"

namespace cortexm {

struct MeanParams {
  int32_t outer = 1;
  int32_t reduce = 1;
  int32_t inner = 1;
  int32_t input_offset = 0;   // -input zero point, in [-127, 128]
  int32_t output_offset = 0;  // +output zero point
  int32_t multiplier = 0;  // s_in / (reduce * s_out)
  int32_t shift = 0;
  int32_t activation_min = -128;
  int32_t activation_max = 127;
};

Error quantized_mean_prepare(const MeanParams& params);

// Bytes of scratch the kernel for `isa` needs (4-byte aligned): one int32 sum per inner element.
size_t quantized_mean_scratch_size(const MeanParams& params, Isa isa);

void quantized_mean(const MeanParams& params, const int8_t* input, int8_t* output, void* scratch);

void quantized_mean_reference(const MeanParams& params, const int8_t* input, int8_t* output);

}  // namespace cortexm
