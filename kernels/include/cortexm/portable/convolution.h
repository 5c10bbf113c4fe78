// Float32 convolution (aten.convolution, not transposed): 1-D on NCW input with OIW weights, 2-D
// on NCHW input with OIHW weights; groups, stride, padding, dilation, optional bias. Each output
// starts at its bias (or 0) and accumulates w * x in float over input channel, kernel row, kernel
// column in that order, skipping taps that fall in the padding.
#pragma once

#include <cstdint>

#include "cortexm/portable/shape.h"

namespace cortexm::portable {

struct ConvolutionParams {
  Shape input;   // [N, C_in, W] or [N, C_in, H, W]
  Shape weight;  // [C_out, C_in / groups, KW] or [C_out, C_in / groups, KH, KW]
  int64_t stride[2] = {1, 1};  // (h, w); 1-D uses index 1 (w) only
  int64_t padding[2] = {0, 0};
  int64_t dilation[2] = {1, 1};
  int64_t groups = 1;
};

// Validates and fills the output shape ([N, C_out, OW] or [N, C_out, OH, OW]).
Error convolution_prepare(const ConvolutionParams& params, Shape* output = nullptr);

void convolution_f32(const ConvolutionParams& params, const float* input, const float* weight,
                     const float* bias, float* output);  // bias [C_out] or null

}  // namespace cortexm::portable
