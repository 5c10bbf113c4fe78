// The conv kernels' load-time analysis (which code paths a call takes, the conv and depthwise
// in-place lags: once per op when a program is loaded or planned) and their edge windows' taps,
// built for size (kernels/CMakeLists.txt).
#include "conv_window.h"
#include "cortexm/kernels/quantized_conv2d.h"
#include "cortexm/kernels/quantized_depthwise_conv2d.h"

namespace cortexm {

TapRange clipped_taps(int64_t origin, int32_t extent, int32_t taps, int32_t dilation) {
  // Unit dilation (the common case) needs no division: a 64-bit one is a library call on the target.
  const auto ceil_div = [dilation](int64_t a) { return dilation == 1 ? a : (a + dilation - 1) / dilation; };
  int64_t first = origin >= 0 ? 0 : ceil_div(-origin);
  int64_t last = origin >= extent ? 0 : ceil_div(extent - origin);
  if (first > taps) first = taps;
  if (last > taps) last = taps;
  if (last < first) last = first;
  return {static_cast<int32_t>(first), static_cast<int32_t>(last)};
}

uint32_t quantized_conv2d_paths(const Conv2dParams& p) {
  const int64_t row_taps = int64_t{p.filter.h} * p.filter.w * p.filter.c;
  return (p.bias_includes_input_offset ? kConv2dFoldedBias : kConv2dUnfoldedBias) |
         (row_taps <= 16 ? kConv2dShortRows : kConv2dLongRows);
}

namespace {

// The lag of a pointwise conv run in blocks of `block` pixels per image: the largest excess of the
// output bytes written up to a block's last pixel over the input bytes before its first, plus
// `room` (bytes the variant keeps between them).
int64_t pointwise_blocks_lag(const Conv2dParams& p, int64_t block, int64_t room) {
  const int64_t pixels = int64_t{p.output.h} * p.output.w, in_c = p.input.c, out_c = p.output.c;
  int64_t lag = 0;
  for (int64_t n = 0; n < p.output.n; ++n)
    for (int64_t first = 0; first < pixels; first += block) {
      const int64_t begin = n * pixels + first, end = begin + (pixels - first < block ? pixels - first : block);
      const int64_t need = end * out_c - begin * in_c + room;
      if (need > lag) lag = need;
    }
  return lag;
}

// v clamped into [0, extent).
inline int64_t clamp_to(int64_t v, int64_t extent) { return v < 0 ? 0 : v >= extent ? extent - 1 : v; }

// Whether every window that has a valid tap along one axis has 2 or 3 of them.
bool windows_2_to_3(int32_t out_extent, int32_t stride, int32_t padding, int32_t in_extent,
                    int32_t taps, int32_t dilation) {
  for (int32_t o = 0; o < out_extent; ++o) {
    const TapRange r = valid_taps(int64_t{o} * stride - padding, in_extent, taps, dilation);
    const int32_t count = r.last - r.first;
    if (count > 0 && (count < 2 || count > 3)) return false;
  }
  return true;
}

}  // namespace

uint32_t quantized_depthwise_conv2d_paths(const DepthwiseConv2dParams& p) {
  if (p.depth_multiplier != 1) return kDepthwiseConv2dMultiplier;
  const ConvGeometry& g = p.geometry;
  // Windows are (rows of an output row) x (columns of an output column).
  const bool small = windows_2_to_3(p.output.h, g.stride_h, g.padding.top, p.input.h, p.filter.h, g.dilation_h) &&
                     windows_2_to_3(p.output.w, g.stride_w, g.padding.left, p.input.w, p.filter.w, g.dilation_w);
  return small ? kDepthwiseConv2dWindows2To3 : kDepthwiseConv2dOtherWindows;
}

namespace {

// The lag of a conv whose window is not pointwise (one group). Every variant gathers a block's
// windows into scratch before its first store and stores only that block's outputs, pixels in
// raster order over the images (scalar and MVE: blocks of 4 per image; DSP: 2 per image; x86: 8
// of any images). So the output may overwrite input bytes once no later pixel reads them: for
// every pixel e, the outputs of the pixels before it (e * out_c bytes) must end at or below the
// lowest input byte read from pixel e on. A pixel's window reads no byte below its clamped top-left
// tap, and every block ends at some pixel: the largest excess over all e serves every variant.
// Scans the pixels from the last with a running minimum (no division, no memory).
int64_t windows_in_place_lag(const Conv2dParams& p) {
  const ConvGeometry& g = p.geometry;
  const int64_t in_h = p.input.h, in_w = p.input.w, in_c = p.input.c, out_c = p.output.c;
  const int64_t image = in_h * in_w * in_c;
  int64_t e = int64_t{p.output.n} * p.output.h * p.output.w;  // the flat index of the pixel
  int64_t lowest_read = e > 0 ? int64_t{p.output.n} * image : 0;  // from pixel e on
  int64_t lag = 0;
  for (int64_t n = int64_t{p.output.n} - 1; n >= 0; --n)
    for (int64_t oy = int64_t{p.output.h} - 1; oy >= 0; --oy) {
      const int64_t row = n * image + clamp_to(oy * g.stride_h - g.padding.top, in_h) * in_w * in_c;
      for (int64_t ox = int64_t{p.output.w} - 1; ox >= 0; --ox) {
        const int64_t first = row + clamp_to(ox * g.stride_w - g.padding.left, in_w) * in_c;
        if (first < lowest_read) lowest_read = first;
        --e;  // now this pixel's index: the pixels before it wrote e * out_c bytes
        if (e * out_c - lowest_read > lag) lag = e * out_c - lowest_read;
      }
    }
  return lag;
}

}  // namespace

int64_t quantized_conv2d_in_place_lag(const Conv2dParams& p) {
  if (p.groups() != 1) return -1;
  if (!is_pointwise(p)) return windows_in_place_lag(p);
  if (p.geometry.stride_h != 1 || p.geometry.stride_w != 1) return -1;
  // Scalar and MVE: blocks of 4 pixels. DSP: blocks of 2, with 2 widened columns (4 bytes per
  // tap) word-aligned after the block's outputs. x86: no more than either (its runs fit the gap).
  const int64_t dsp = pointwise_blocks_lag(p, 2, 4 * int64_t{p.filter.c} + 3);
  const int64_t four = pointwise_blocks_lag(p, 4, 0);
  return dsp > four ? dsp : four;
}

int64_t quantized_depthwise_conv2d_in_place_lag(const DepthwiseConv2dParams& p) {
  const ConvGeometry& g = p.geometry;
  const int64_t in_h = p.input.h, in_w = p.input.w, image = in_h * in_w;
  const int64_t out_h = p.output.h, out_w = p.output.w;
  // The first input row (column) a window of output row oy (column ox) may read; clamped into
  // the image, which can only lower it.
  auto first_row = [&](int64_t oy) { return clamp_to(oy * g.stride_h - g.padding.top, in_h); };
  auto first_col = [&](int64_t ox) { return clamp_to(ox * g.stride_w - g.padding.left, in_w); };
  int64_t lag = 0;
  for (int64_t n = 0; n < p.output.n; ++n)
    for (int64_t y = 0; y < out_h; ++y) {
      // The first input pixel the windows from (n, y - 1, x) on read: row y - 1 from column x, or
      // from row y on, whose first window starts at column 0 (later rows start no earlier).
      const int64_t from_y = y > 0 ? y - 1 : 0;
      const int64_t next_rows = from_y + 1 < out_h ? first_row(from_y + 1) * in_w : image;
      for (int64_t x = 0; x < out_w; ++x) {
        const int64_t same_row = first_row(from_y) * in_w + first_col(x);
        const int64_t pending = n * image + (same_row < next_rows ? same_row : next_rows);
        const int64_t written = ((n * out_h + y) * out_w + x + 1) * p.output.c;
        if (written - pending * p.input.c > lag) lag = written - pending * p.input.c;
      }
    }
  return lag;
}

}  // namespace cortexm
