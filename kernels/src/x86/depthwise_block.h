// The depthwise conv loop of the host's x86 variants (depth multiplier 1), shared by them: a
// variant supplies its vector type (Lanes: kChannels int32 lanes) and includes this from a file
// built for its instruction set. One output pixel at a time in raster order, as the scalar kernel
// (so in place from the same lag): per block of kChannels channels each valid tap is widened to
// int32, offset, multiplied and added; the sums get the bias and are requantized together
// (x86/requantize8.h) and stored. The channels past the last whole block run scalar. Sums wrap
// modulo 2^32 like the scalar kernel's.
#pragma once

#include <cstring>

#include "conv_window.h"
#include "cortexm/kernels/quantized_depthwise_conv2d.h"
#include "cortexm/kernels/requantize.h"
#include "x86/requantize8.h"

namespace cortexm::x86 {
// Internal linkage: each file that includes this is built for its own instruction set, and the
// linker must not pick one file's copy of an inline function for another.
namespace {

// pixel(image, out, taps) for every output pixel: `image` is its batch's input, `out` its output
// channels; taps(visit) calls visit(input offset of the tap's pixel, filter offset of the tap) for
// each tap inside the input.
template <typename Pixel>
void for_each_pixel(const DepthwiseConv2dParams& p, const int8_t* input, int8_t* output, Pixel pixel) {
  const ConvGeometry& geo = p.geometry;
  const int32_t in_h = p.input.h, in_w = p.input.w, channels = p.input.c;
  const int32_t kernel_h = p.filter.h, kernel_w = p.filter.w;
  for (int32_t n = 0; n < p.output.n; ++n) {
    const int8_t* image = input + int64_t{n} * in_h * in_w * channels;
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      const int64_t y0 = int64_t{oy} * geo.stride_h - geo.padding.top;
      const TapRange rows = valid_taps(y0, in_h, kernel_h, geo.dilation_h);
      int8_t* out = output + (int64_t{n} * p.output.h + oy) * p.output.w * channels;
      for (int32_t ox = 0; ox < p.output.w; ++ox, out += channels) {
        const int64_t x0 = int64_t{ox} * geo.stride_w - geo.padding.left;
        const TapRange cols = valid_taps(x0, in_w, kernel_w, geo.dilation_w);
        pixel(image, out, [&](auto visit) {
          for (int32_t kh = rows.first; kh < rows.last; ++kh) {
            const int64_t iy = y0 + int64_t{kh} * geo.dilation_h;
            for (int32_t kw = cols.first; kw < cols.last; ++kw)
              visit((iy * in_w + x0 + int64_t{kw} * geo.dilation_w) * channels, (int64_t{kh} * kernel_w + kw) * channels);
          }
        });
      }
    }
  }
}

// The channels [first, channels) of one output pixel, one at a time (the scalar kernel's sums).
template <typename Taps>
void scalar_channels(const ConvQuantParams& q, const int8_t* image, const int8_t* filter, const int32_t* bias,
                     int32_t first, int32_t channels, int8_t* out, Taps taps) {
  for (int32_t c = first; c < channels; ++c) {
    uint32_t sum = bias ? static_cast<uint32_t>(bias[c]) : 0u;
    taps([&](int64_t at, int64_t w) { sum += static_cast<uint32_t>((image[at + c] + q.input_offset) * filter[w + c]); });
    const int32_t scaled = wrapping_add(requantize(static_cast<int32_t>(sum), q.multipliers[c], q.shifts[c]),
                                        q.output_offset);
    out[c] = static_cast<int8_t>(clamp(scaled, q.activation_min, q.activation_max));
  }
}

// Windows of at most this many taps run a row at a time (their widened weights held per block).
constexpr int32_t kMaxRowTaps = 25;

// start + the products of a window inside the input (x itself: the offset is in start), its taps at
// window + tap_offsets[t]; kTaps > 0 fixes their count (unrolled), else `taps`. Three accumulators
// in turn (the sums wrap, so any order gives the same): shorter chains of dependent multiply-adds.
template <class Lanes, int32_t kTaps>
__attribute__((always_inline)) inline typename Lanes::Vec inside_sum(typename Lanes::Vec start, const int8_t* window,
                                                                     const int64_t* tap_offsets,
                                                                     const typename Lanes::Vec* weights,
                                                                     int32_t taps = kTaps) {
  typename Lanes::Vec acc[3] = {start, Lanes::splat(0), Lanes::splat(0)};
  for (int32_t t = 0; t < (kTaps > 0 ? kTaps : taps); ++t)
    acc[t % 3] = Lanes::dot(acc[t % 3], Lanes::widen(window + tap_offsets[t]), weights[t]);
  return Lanes::add(acc[0], Lanes::add(acc[1], acc[2]));
}
// An output row over its own input goes through a buffer this large (when it fits).
constexpr int64_t kRowBuffer = 16384;

// One output row at a time: per block of channels the requantize and the widened weights are set up
// once for the row, then every pixel of the row. A product is one int16 multiply-add (|x + offset|
// <= 255 and |w| <= 128 fit int16; the weight's high half is 0). A pixel whose window lies inside
// the input starts from bias + offset * (sum of the block's weights) and multiplies x itself. In place (the output over the input from the
// kernel's lag) the row goes to `row_buffer` and is copied out after the row's last read: its
// writes come after every read of the row's pixels and before any of the next row's, as in raster
// order.
template <class Lanes>
void depthwise_rows(const DepthwiseConv2dParams& p, const int8_t* input, const int8_t* filter, const int32_t* bias,
                    int8_t* output, int8_t* row_buffer) {
  using Vec = typename Lanes::Vec;
  constexpr int32_t kChannels = Lanes::kChannels;
  const ConvQuantParams& q = p.quant;
  const ConvGeometry& geo = p.geometry;
  const int32_t in_h = p.input.h, in_w = p.input.w, channels = p.input.c;
  const int32_t kernel_h = p.filter.h, kernel_w = p.filter.w, out_w = p.output.w;
  const int32_t vector_channels = channels / kChannels * kChannels;
  const Vec offset = Lanes::splat(q.input_offset);
  // The output columns [inside_first, inside_last) have every column of their window inside.
  int32_t inside_first = 0, inside_last = 0;
  while (inside_first < out_w && valid_taps(int64_t{inside_first} * geo.stride_w - geo.padding.left, in_w, kernel_w,
                                            geo.dilation_w).first > 0)
    ++inside_first;
  for (int32_t ox = inside_first; ox < out_w; ++ox) {
    const TapRange cols = valid_taps(int64_t{ox} * geo.stride_w - geo.padding.left, in_w, kernel_w, geo.dilation_w);
    if (cols.first != 0 || cols.last != kernel_w) break;
    inside_last = ox + 1;
  }
  // The input offset of each tap of a window inside the input from its first tap.
  const int32_t taps = kernel_h * kernel_w;
  int64_t tap_offsets[kMaxRowTaps];
  for (int32_t t = 0; t < taps; ++t)
    tap_offsets[t] = (int64_t{t / kernel_w} * geo.dilation_h * in_w + int64_t{t % kernel_w} * geo.dilation_w) * channels;
  for (int32_t n = 0; n < p.output.n; ++n) {
    const int8_t* image = input + int64_t{n} * in_h * in_w * channels;
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      const int64_t y0 = int64_t{oy} * geo.stride_h - geo.padding.top;
      const TapRange rows = valid_taps(y0, in_h, kernel_h, geo.dilation_h);
      const bool full_rows = rows.first == 0 && rows.last == kernel_h;
      int8_t* const out_at = output + (int64_t{n} * p.output.h + oy) * out_w * channels;
      int8_t* const out_row = row_buffer ? row_buffer : out_at;
      const auto pixel_taps = [&](int32_t ox, auto visit) {
        const int64_t x0 = int64_t{ox} * geo.stride_w - geo.padding.left;
        const TapRange cols = valid_taps(x0, in_w, kernel_w, geo.dilation_w);
        for (int32_t kh = rows.first; kh < rows.last; ++kh) {
          const int64_t iy = y0 + int64_t{kh} * geo.dilation_h;
          for (int32_t kw = cols.first; kw < cols.last; ++kw)
            visit((iy * in_w + x0 + int64_t{kw} * geo.dilation_w) * channels, kh * kernel_w + kw);
        }
      };
      for (int32_t c = 0; c < vector_channels; c += kChannels) {
        const typename Lanes::Requantize requantize(q, c);
        Vec weights[kMaxRowTaps];
        Vec weight_sum = Lanes::splat(0);
        for (int32_t t = 0; t < kernel_h * kernel_w; ++t) {
          weights[t] = Lanes::weight(filter + int64_t{t} * channels + c);
          weight_sum = Lanes::add(weight_sum, Lanes::widen(filter + int64_t{t} * channels + c));
        }
        const Vec start = bias ? Lanes::load32(bias + c) : Lanes::splat(0);
        const Vec inside_start = Lanes::multiply_add(start, offset, weight_sum);  // wraps as the sums do
        for (int32_t ox = 0; ox < out_w; ++ox) {
          Vec acc;
          if (full_rows && ox >= inside_first && ox < inside_last) {
            const int8_t* window = image + (y0 * in_w + int64_t{ox} * geo.stride_w - geo.padding.left) * channels + c;
            acc = taps == 9 ? inside_sum<Lanes, 9>(inside_start, window, tap_offsets, weights)
                            : inside_sum<Lanes, 0>(inside_start, window, tap_offsets, weights, taps);
          } else {
            acc = start;
            pixel_taps(ox, [&](int64_t at, int32_t t) {
              acc = Lanes::dot(acc, Lanes::add(Lanes::widen(image + at + c), offset), weights[t]);
            });
          }
          requantize.store(acc, out_row + int64_t{ox} * channels + c);
        }
      }
      for (int32_t ox = 0; ox < out_w && vector_channels < channels; ++ox)
        scalar_channels(q, image, filter, bias, vector_channels, channels, out_row + int64_t{ox} * channels,
                        [&](auto visit) {
                          pixel_taps(ox, [&](int64_t at, int32_t t) { visit(at, int64_t{t} * channels); });
                        });
      if (row_buffer) std::memcpy(out_at, row_buffer, static_cast<size_t>(out_w) * static_cast<size_t>(channels));
    }
  }
}

template <class Lanes>
void depthwise_s8(const DepthwiseConv2dParams& p, const int8_t* input, const int8_t* filter, const int32_t* bias,
                  int8_t* output) {
  using Vec = typename Lanes::Vec;
  constexpr int32_t kChannels = Lanes::kChannels;
  const ConvQuantParams& q = p.quant;
  const int32_t channels = p.input.c;
  // A row at a time; through a buffer unless the output ends before the input or starts after it.
  const bool apart = output + p.output.elements() <= input || input + p.input.elements() <= output;
  if (p.filter.h * p.filter.w <= kMaxRowTaps && (apart || int64_t{p.output.w} * channels <= kRowBuffer)) {
    int8_t row_buffer[kRowBuffer];
    depthwise_rows<Lanes>(p, input, filter, bias, output, apart ? nullptr : row_buffer);
    return;
  }
  const int32_t vector_channels = channels / kChannels * kChannels;
  const Vec offset = Lanes::splat(q.input_offset);
  for_each_pixel(p, input, output, [&](const int8_t* image, int8_t* out, auto taps) {
    for (int32_t c = 0; c < vector_channels; c += kChannels) {
      Vec acc = bias ? Lanes::load32(bias + c) : Lanes::splat(0);
      taps([&](int64_t at, int64_t w) {
        acc = Lanes::multiply_add(acc, Lanes::add(Lanes::widen(image + at + c), offset), Lanes::widen(filter + w + c));
      });
      typename Lanes::Requantize(q, c).store(acc, out + c);
    }
    scalar_channels(q, image, filter, bias, vector_channels, channels, out, taps);  // the last channels
  });
}

}  // namespace
}  // namespace cortexm::x86
