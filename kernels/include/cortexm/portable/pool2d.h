// Float32 2-D pooling on NCHW or CHW input with torch's geometry (aten.avg_pool2d,
// aten.max_pool2d): output size floor (or ceil) of the window count, and with ceil_mode the last
// window must start inside the input or the left padding; padding at most half the kernel.
//   avg: sum in double over the window clipped to the input, divided in double by
//        divisor_override, or the window clipped to the padded input (count_include_pad), or the
//        window clipped to the input; a window wholly in the padding gives 0.
//   max: padding never wins; a NaN in the window gives NaN.
#pragma once

#include <cstdint>

#include "cortexm/portable/shape.h"

namespace cortexm::portable {

struct Pool2dParams {
  Shape input;  // [N, C, H, W] or [C, H, W]; C, H, W >= 1
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;  // max pool only; avg pool requires 1
  bool ceil_mode = false;
};

struct AvgPool2dParams {
  Pool2dParams pool;
  bool count_include_pad = true;
  int64_t divisor_override = 0;  // 0 = none (torch rejects 0; negative divisors are allowed)
};

// torch's pooling_output_shape along one axis.
int64_t pool2d_output_size(int64_t in, int64_t kernel, int64_t pad, int64_t stride,
                           int64_t dilation, bool ceil_mode);

Error max_pool2d_prepare(const Pool2dParams& params, Shape* output = nullptr);
void max_pool2d_f32(const Pool2dParams& params, const float* in, float* out);

Error avg_pool2d_prepare(const AvgPool2dParams& params, Shape* output = nullptr);
void avg_pool2d_f32(const AvgPool2dParams& params, const float* in, float* out);

// Adaptive average pooling (aten.adaptive_avg_pool2d): output cell i averages input rows
// [floor(i * in / out), ceil((i + 1) * in / out)), summed and divided in double.
struct AdaptiveAvgPool2dParams {
  Shape input;  // [N, C, H, W] or [C, H, W]; C, H, W >= 1
  int64_t out_h = 1, out_w = 1;
};

Error adaptive_avg_pool2d_prepare(const AdaptiveAvgPool2dParams& params, Shape* output = nullptr);
void adaptive_avg_pool2d_f32(const AdaptiveAvgPool2dParams& params, const float* in, float* out);

}  // namespace cortexm::portable
