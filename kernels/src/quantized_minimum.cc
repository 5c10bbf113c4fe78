#include "cortexm/kernels/quantized_minimum.h"

#include "minmax_impl.h"

namespace cortexm {

void quantized_minimum(const MinMaxParams& params, const int8_t* lhs, const int8_t* rhs,
                      int8_t* output) {
  detail::minmax<false>(params, lhs, rhs, output);
}

}  // namespace cortexm
