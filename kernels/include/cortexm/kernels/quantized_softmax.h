// cortex_m.quantized_softmax (arm_softmax_s8): softmax over each contiguous row of int8 values,
// output int8 at scale 1/256 and zero point -128. Per element: diff = x - row max; diffs below
// diff_min count as exp = 0 (output -128); otherwise diff * 2^input_left_shift * input_multiplier
// is the scaled diff in Q5.26, exp of it in Q0.31, the sum of exps in Q12.19 and its reciprocal by
// Newton-Raphson give round(256 * exp / sum) - 128.
#pragma once

#include <cstdint>

#include "cortexm/kernels/status.h"

namespace cortexm {

// The sum of exps in Q12.19 holds 4096 exps of at most 1.0 each.
constexpr int32_t kSoftmaxMaxRowSize = 4096;

// Ahead-of-time scaling of input differences (TFLite's PreprocessSoftmaxScaling with beta 1 and
// 5 integer bits, and CalculateInputRadius).
struct SoftmaxScaling {
  int32_t input_multiplier = 0;  // in [2^30, 2^31)
  int32_t input_left_shift = 0;  // in [0, 31]
  int32_t diff_min = 0;          // <= 0
};

// input_scale must be finite and in [2^-26, 2^36) (the scaled diff's multiplier is >= 1).
Error softmax_scaling(double input_scale, SoftmaxScaling* scaling);

struct SoftmaxParams {
  int32_t rows = 1;
  int32_t row_size = 1;  // in [1, kSoftmaxMaxRowSize]
  SoftmaxScaling scaling;
};

Error quantized_softmax_prepare(const SoftmaxParams& params);

// input and output: rows * row_size int8, rows contiguous.
void quantized_softmax(const SoftmaxParams& params, const int8_t* input, int8_t* output);

void quantized_softmax_reference(const SoftmaxParams& params, const int8_t* input, int8_t* output);

}  // namespace cortexm
