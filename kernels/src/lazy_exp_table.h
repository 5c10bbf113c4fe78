// The exp table of quantized_softmax / quantized_log_softmax (kernels/src only): exp depends on
// the int8 difference alone, so the 256 possible values (1 KB of stack) are kept, each computed on
// first use.
#pragma once

#include <cstdint>

namespace cortexm {

class LazyExpTable {
 public:
  // The value for k = -diff in [0, 255]; compute(k) makes it the first time.
  template <typename Compute>
  int32_t get(int32_t k, Compute compute) {
    if (!(filled_[k >> 5] & (uint32_t{1} << (k & 31)))) {
      values_[k] = compute(k);
      filled_[k >> 5] |= uint32_t{1} << (k & 31);
    }
    return values_[k];
  }

 private:
  int32_t values_[256];
  uint32_t filled_[8] = {0, 0, 0, 0, 0, 0, 0, 0};
};

}  // namespace cortexm
