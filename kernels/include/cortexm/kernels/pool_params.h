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

// Kernel, stride and padding positive and sane (padding < kernel), every window holds at least one
// valid tap, output == pool2d_output_dims, activation range within int8.
Error validate_pool2d(const Pool2dParams& params);

}  // namespace cortexm
