// cortex_m.quantized_log_softmax: log_softmax over each contiguous row of int8 values, output int8
// at scale 16/256 and zero point 127 (TFLite's int8 LogSoftmax, reference_ops::LogSoftmax).
// Per row: diff = x - row max, scaled to Q5.26 as in softmax; the sum of exp(diff) over diffs
// >= diff_min in Q12.19; its log in Q5.26 (gemmlowp-style log_x_for_x_greater_than_or_equal_to_1);
// output = round((scaled diff - log sum) * 16) + 127, clamped. Diffs at or below the one whose
// result would leave Q5.26 (found with the reverse scaling) give -128.
#pragma once

#include <cstdint>

#include "cortexm/kernels/quantized_softmax.h"

namespace cortexm {

struct LogSoftmaxScaling {
  int32_t input_multiplier = 0;  // as SoftmaxScaling
  int32_t input_left_shift = 0;
  int32_t diff_min = 0;
  // 1 / (input_multiplier * 2^(input_left_shift - 31)): scaled diffs back to int8 diffs.
  int32_t reverse_scaling_divisor = 0;
  int32_t reverse_scaling_right_shift = 0;  // in [0, 31]
};

// TFLite's PreprocessLogSoftmaxScalingExp with beta 1 and 5 integer bits.
Error log_softmax_scaling(double input_scale, LogSoftmaxScaling* scaling);

struct LogSoftmaxParams {
  int32_t rows = 1;
  int32_t row_size = 1;  // in [1, kSoftmaxMaxRowSize]
  LogSoftmaxScaling scaling;
};

Error quantized_log_softmax_prepare(const LogSoftmaxParams& params);

void quantized_log_softmax(const LogSoftmaxParams& params, const int8_t* input, int8_t* output);

void quantized_log_softmax_reference(const LogSoftmaxParams& params, const int8_t* input,
                                     int8_t* output);

namespace fixed_point {
// log(x) for x >= 1 given in Q12.19, result in Q5.26.
int32_t log_q12_to_q5(int32_t x);
}  // namespace fixed_point

}  // namespace cortexm
