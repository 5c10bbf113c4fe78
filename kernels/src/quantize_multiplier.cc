#include <cmath>

#include "cortexm/kernels/requantize.h"

namespace cortexm {

QuantizedMultiplier quantize_multiplier(double real_scale) {
  if (!(real_scale > 0.0) || !std::isfinite(real_scale)) return {0, 0};
  int exponent = 0;
  const double fraction = std::frexp(real_scale, &exponent);  // in [0.5, 1)
  int64_t q = static_cast<int64_t>(std::round(fraction * static_cast<double>(int64_t{1} << 31)));
  if (q == (int64_t{1} << 31)) {
    q /= 2;
    ++exponent;
  }
  if (exponent < kMinShift) return {0, 0};
  if (exponent > kMaxShift) return {INT32_MAX, kMaxShift};
  return {static_cast<int32_t>(q), exponent};
}

}  // namespace cortexm
