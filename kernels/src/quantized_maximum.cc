#include "cortexm/kernels/quantized_maximum.h"

#include "minmax_impl.h"

namespace cortexm {

void quantized_maximum(const MinMaxParams& params, const int8_t* lhs, const int8_t* rhs,
                      int8_t* output) {
  detail::minmax<true>(params, lhs, rhs, output);
}

}  // namespace cortexm
