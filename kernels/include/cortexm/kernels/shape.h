// Shapes the kernels see: NHWC activations, OHWI filters.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cortexm {

struct Dims4 {
  int32_t n = 1, h = 1, w = 1, c = 1;
  constexpr int64_t elements() const { return int64_t{n} * h * w * c; }
};

// Explicit padding; bottom and right may differ from top and left.
struct Padding2d {
  int32_t top = 0, left = 0, bottom = 0, right = 0;
};

// Output extent of a convolution or pooling window along one axis; 0 when the window never fits.
constexpr int32_t window_output_size(int32_t in, int32_t kernel, int32_t stride, int32_t dilation,
                                     int32_t pad_before, int32_t pad_after) {
  const int64_t span = int64_t{in} + pad_before + pad_after - int64_t{dilation} * (kernel - 1) - 1;
  return span < 0 ? 0 : static_cast<int32_t>(span / stride + 1);
}

}  // namespace cortexm
