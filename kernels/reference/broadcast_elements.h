// The plain-loop walk of the elementwise references (kernels/reference only): every output
// element in order, with its lhs and rhs indices under numpy broadcasting.
#pragma once

#include "cortexm/kernels/broadcast.h"

namespace cortexm::reference {

// element(e, li, ri) for output element e, which reads lhs[li] and rhs[ri].
template <typename Element>
void for_each_broadcast_element(const BroadcastShape& shape, Element element) {
  const int64_t total = shape.elements();
  for (int64_t e = 0; e < total; ++e) {
    int64_t li = 0, ri = 0, rem = e;
    for (int d = shape.rank - 1; d >= 0; --d) {
      const int64_t index = rem % shape.dims[d];
      rem /= shape.dims[d];
      li += index * shape.lhs_strides[d];
      ri += index * shape.rhs_strides[d];
    }
    element(e, li, ri);
  }
}

}  // namespace cortexm::reference
