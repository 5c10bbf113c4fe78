// Shared by quantized_avg_pool2d's variants: the division (windows hold at most 2^23 valid taps, so
// |sum| + count / 2 < 2^31 and the quotient is a multiply and a shift) and the walk over windows.
#pragma once

#include <cstdint>

#include "cortexm/kernels/quantized_avg_pool2d.h"

// For the variants' per-window lambdas: GCC (the Cortex-M builds) takes the attribute after
// `mutable`; clang (the host sanitizer and fuzz builds) rejects it there and gets no hint.
#if defined(__clang__)
#define CORTEXM_LAMBDA_ALWAYS_INLINE
#else
#define CORTEXM_LAMBDA_ALWAYS_INLINE __attribute__((always_inline))
#endif

namespace cortexm {

// Most valid taps a window may hold: keeps |sum| + count / 2 below 2^31.
constexpr int64_t kMaxAvgPoolWindowTaps = int64_t{1} << 23;

// floor(n / d) for 0 <= n < 2^31 and 1 <= d <= 2^23 as (n * multiplier) >> shift, with
// multiplier = ceil(2^(31 + l) / d), l = ceil(log2(d)) (Granlund and Montgomery, theorem 4.2).
struct UnsignedDivider {
  uint32_t multiplier = 1u << 31;
  int32_t shift = 31;

  explicit UnsignedDivider(int32_t d) {
    int32_t l = 0;
    while ((int64_t{1} << l) < d) ++l;
    const uint64_t numerator = uint64_t{1} << (31 + l);
    multiplier = static_cast<uint32_t>((numerator + static_cast<uint64_t>(d) - 1) / d);
    shift = 31 + l;
  }

  uint32_t divide(uint32_t n) const {
    return static_cast<uint32_t>((uint64_t{n} * multiplier) >> shift);
  }
};

// Valid taps of the largest window: rows times columns, each at most the input's extent.
inline int64_t avg_pool_max_window_taps(const Pool2dParams& p) {
  const int64_t rows = p.kernel_h < p.input.h ? p.kernel_h : p.input.h;
  const int64_t cols = p.kernel_w < p.input.w ? p.kernel_w : p.input.w;
  return rows * cols;
}

// Calls f(window, rows, cols, out) for each output pixel in order: window points at the first
// valid tap of its first channel, rows x cols valid taps (a row input.w * input.c bytes apart, a
// tap input.c), out at the pixel's first output channel.
template <typename F>
void for_each_pool_window(const Pool2dParams& p, const int8_t* input, int8_t* output, F f) {
  const int32_t channels = p.input.c;
  const int64_t row_step = int64_t{p.input.w} * channels;
  for (int32_t n = 0; n < p.output.n; ++n) {
    const int8_t* image = input + n * (p.input.h * row_step);
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      const PoolTaps ty = pool_window_taps(oy, p.stride_h, p.padding.top, p.kernel_h, p.input.h);
      const int64_t y0 = int64_t{oy} * p.stride_h - p.padding.top + ty.begin;
      for (int32_t ox = 0; ox < p.output.w; ++ox, output += channels) {
        const PoolTaps tx = pool_window_taps(ox, p.stride_w, p.padding.left, p.kernel_w, p.input.w);
        const int64_t x0 = int64_t{ox} * p.stride_w - p.padding.left + tx.begin;
        f(image + y0 * row_step + x0 * channels, ty.end - ty.begin, tx.end - tx.begin, output);
      }
    }
  }
}

}  // namespace cortexm
