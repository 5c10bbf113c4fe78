// The division of quantized_avg_pool2d, shared by its scalar and vector variants: windows hold at
// most 2^23 valid taps, so |sum| + count / 2 < 2^31 and the quotient is a multiply and a shift.
#pragma once

#include <cstdint>

#include "cortexm/kernels/quantized_avg_pool2d.h"

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

}  // namespace cortexm
