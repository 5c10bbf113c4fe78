// Window arithmetic shared by the convolution kernels and their DSP / MVE variants: which taps of
// a dilated window land inside the input, and the im2col gather of one output pixel's taps.
#pragma once

#include <cstdint>

#include "cortexm/kernels/quantized_conv2d.h"

namespace cortexm {

// Taps [first, last) of a dilated window starting at `origin` that land inside [0, extent).
struct TapRange {
  int32_t first, last;
};

// valid_taps for a window that reaches past an edge; out of line (conv_analysis.cc): edge windows
// are the few, and inlined at each of a kernel's callers it costs about 1 KB of flash.
TapRange clipped_taps(int64_t origin, int32_t extent, int32_t taps, int32_t dilation);

inline TapRange valid_taps(int64_t origin, int32_t extent, int32_t taps, int32_t dilation) {
  const int64_t span = int64_t{taps - 1} * dilation;
  if (origin >= 0 && origin + span < extent) return {0, taps};  // inside: no division
  return clipped_taps(origin, extent, taps, dilation);
}

// A 1x1 window without padding reads one input row per output pixel: the row is the column.
inline bool is_pointwise(const Conv2dParams& p) {
  const Padding2d& pad = p.geometry.padding;
  return p.filter.h == 1 && p.filter.w == 1 && pad.top == 0 && pad.left == 0 &&
         pad.bottom == 0 && pad.right == 0;
}

// The input row a pointwise output pixel (oy, ox) reads, from `group`'s first channel.
inline const int8_t* pointwise_row(const Conv2dParams& p, const int8_t* image, int32_t group, int32_t oy,
                                   int32_t ox) {
  const int64_t iy = int64_t{oy} * p.geometry.stride_h;
  const int64_t ix = int64_t{ox} * p.geometry.stride_w;
  return image + (iy * p.input.w + ix) * p.input.c + int64_t{group} * p.filter.c;
}

// Writes the receptive field of output pixel (oy, ox) for `group` in the (kh, kw, c) order of a
// filter row: fill(dst, count) writes padded taps, copy(src, count, dst) copies input taps.
template <typename T, typename Fill, typename Copy>
void gather_column(const Conv2dParams& p, const int8_t* image, int32_t group, int32_t oy,
                   int32_t ox, T* column, Fill fill, Copy copy) {
  const ConvGeometry& g = p.geometry;
  const int32_t in_w = p.input.w, in_c = p.input.c;
  const int32_t kernel_w = p.filter.w, group_c = p.filter.c;
  const int64_t y0 = int64_t{oy} * g.stride_h - g.padding.top;
  const int64_t x0 = int64_t{ox} * g.stride_w - g.padding.left;
  const TapRange rows = valid_taps(y0, p.input.h, p.filter.h, g.dilation_h);
  const TapRange cols = valid_taps(x0, in_w, kernel_w, g.dilation_w);
  const int32_t row_length = kernel_w * group_c;
  // With unit dilation and all channels in one group, the valid taps of a row are contiguous.
  const bool contiguous = g.dilation_w == 1 && group_c == in_c;

  fill(column, rows.first * row_length);
  column += rows.first * row_length;
  for (int32_t kh = rows.first; kh < rows.last; ++kh) {
    const int64_t iy = y0 + int64_t{kh} * g.dilation_h;
    const int8_t* row = image + iy * in_w * in_c + int64_t{group} * group_c;
    fill(column, cols.first * group_c);
    column += cols.first * group_c;
    if (contiguous) {
      const int32_t count = (cols.last - cols.first) * group_c;
      copy(row + (x0 + cols.first) * in_c, count, column);
      column += count;
    } else {
      for (int32_t kw = cols.first; kw < cols.last; ++kw) {
        copy(row + (x0 + int64_t{kw} * g.dilation_w) * in_c, group_c, column);
        column += group_c;
      }
    }
    fill(column, (kernel_w - cols.last) * group_c);
    column += (kernel_w - cols.last) * group_c;
  }
  fill(column, (p.filter.h - rows.last) * row_length);
}

}  // namespace cortexm
