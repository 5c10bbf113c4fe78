#include "cortexm/kernels/quantized_mul.h"

#include "broadcast_elements.h"
#include "cortexm/kernels/requantize.h"

namespace cortexm {

void quantized_mul_reference(const MulParams& p, const int8_t* lhs, const int8_t* rhs,
                             int8_t* output) {
  reference::for_each_broadcast_element(p.shape, [&](int64_t e, int64_t li, int64_t ri) {
    const int32_t product = (lhs[li] + p.lhs_offset) * (rhs[ri] + p.rhs_offset);
    const int32_t out = wrapping_add(
        requantize(product, p.output_multiplier, p.output_shift), p.output_offset);
    output[e] = static_cast<int8_t>(clamp(out, p.activation_min, p.activation_max));
  });
}

}  // namespace cortexm
