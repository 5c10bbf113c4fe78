// The plain loops the convolution references share (kernels/reference only): output pixels in
// order, the taps of a dilated window that land inside the input, and the int8 requantize.
#pragma once

#include "cortexm/kernels/conv_params.h"
#include "cortexm/kernels/requantize.h"

namespace cortexm::reference {

// pixel(n, oy, ox, out_pixel) for every output pixel, out_pixel its flat index in output.
template <typename Pixel>
void for_each_output_pixel(const Dims4& output, Pixel pixel) {
  for (int32_t n = 0; n < output.n; ++n)
    for (int32_t oy = 0; oy < output.h; ++oy)
      for (int32_t ox = 0; ox < output.w; ++ox)
        pixel(n, oy, ox, (int64_t{n} * output.h + oy) * output.w + ox);
}

// tap(kh, kw, in_pixel) for the window taps of output pixel (n, oy, ox) inside the input,
// in_pixel the flat index of the input pixel the tap reads.
template <typename Tap>
void for_each_window_tap(const Dims4& input, const ConvGeometry& g, int32_t kernel_h,
                         int32_t kernel_w, int32_t n, int32_t oy, int32_t ox, Tap tap) {
  for (int32_t kh = 0; kh < kernel_h; ++kh) {
    const int64_t iy = int64_t{oy} * g.stride_h - g.padding.top + int64_t{kh} * g.dilation_h;
    if (iy < 0 || iy >= input.h) continue;
    for (int32_t kw = 0; kw < kernel_w; ++kw) {
      const int64_t ix = int64_t{ox} * g.stride_w - g.padding.left + int64_t{kw} * g.dilation_w;
      if (ix < 0 || ix >= input.w) continue;
      tap(kh, kw, (int64_t{n} * input.h + iy) * input.w + ix);
    }
  }
}

// A pooling window as a convolution window: its stride and padding, no dilation.
inline ConvGeometry pool_geometry(int32_t stride_h, int32_t stride_w, const Padding2d& padding) {
  ConvGeometry g;
  g.stride_h = stride_h;
  g.stride_w = stride_w;
  g.padding = padding;
  return g;
}

// The int8 output of channel oc for an accumulator summed modulo 2^32 (the target's 32-bit adds).
inline int8_t requantize_output(uint32_t acc, const ConvQuantParams& q, int32_t oc) {
  const int32_t scaled = requantize(static_cast<int32_t>(acc), q.multipliers[oc], q.shifts[oc]);
  const int32_t out = static_cast<int32_t>(static_cast<uint32_t>(scaled) +
                                           static_cast<uint32_t>(q.output_offset));
  return static_cast<int8_t>(clamp(out, q.activation_min, q.activation_max));
}

}  // namespace cortexm::reference
