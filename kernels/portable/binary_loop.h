// Private: the broadcast walk shared by the binary kernels; fn(a, b) is the element formula.
#pragma once

#include "cortexm/portable/binary.h"

namespace cortexm::portable {

template <typename Fn>
inline void binary_loop(const BinaryParams& p, const float* lhs, const float* rhs, float* out,
                        Fn fn) {
  if (p.empty) return;
  for_each_broadcast_run(p.shape, [&](int64_t li, int64_t ri, int32_t count, int32_t ls,
                                      int32_t rs) {
    const float* a = lhs + li;
    const float* b = rhs + ri;
    float* o = out;
    out += count;
    if (ls == 1 && rs == 1) {
      for (int32_t i = 0; i < count; ++i) o[i] = fn(a[i], b[i]);
    } else if (ls == 1 && rs == 0) {
      const float b0 = b[0];
      for (int32_t i = 0; i < count; ++i) o[i] = fn(a[i], b0);
    } else if (ls == 0 && rs == 1) {
      const float a0 = a[0];
      for (int32_t i = 0; i < count; ++i) o[i] = fn(a0, b[i]);
    } else {
      for (int32_t i = 0; i < count; ++i) o[i] = fn(a[i * ls], b[i * rs]);
    }
  });
}

}  // namespace cortexm::portable
