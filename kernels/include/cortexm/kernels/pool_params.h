// Parameters shared by the pooling kernels (NHWC int8, no dilation).
#pragma once

#include <cstdint>

#include "cortexm/kernels/shape.h"
#include "cortexm/kernels/status.h"

namespace cortexm {

struct Pool2dParams {
  Dims4 input;   // N, H, W, C
  Dims4 output;  // N, OH, OW, C
  int32_t kernel_h = 1, kernel_w = 1;
  int32_t stride_h = 1, stride_w = 1;
  Padding2d padding;
  int32_t activation_min = -128;
  int32_t activation_max = 127;
};

Dims4 pool2d_output_dims(const Pool2dParams& params);

// Kernel taps [begin, end) of one window along one axis that land inside the input.
struct PoolTaps {
  int32_t begin = 0, end = 0;
};

// Window at output index `out` starts at input index out * stride - pad_before.
inline PoolTaps pool_window_taps(int32_t out, int32_t stride, int32_t pad_before, int32_t kernel,
                                 int32_t input_extent) {
  const int64_t start = int64_t{out} * stride - pad_before;
  PoolTaps taps;
  taps.begin = start < 0 ? static_cast<int32_t>(-start) : 0;
  const int64_t end = input_extent - start;
  taps.end = end < kernel ? static_cast<int32_t>(end) : kernel;
  return taps;
}

// Kernel, stride and padding positive and sane (padding < kernel), every window holds at least one
// valid tap, output == pool2d_output_dims, activation range within int8 (int16 when int16).
Error validate_pool2d(const Pool2dParams& params, bool int16 = false);

}  // namespace cortexm
