#include "cortexm/kernels/quantized_mul_s16.h"

#include "broadcast_elements.h"
#include "cortexm/kernels/requantize.h"

namespace cortexm {

void quantized_mul_s16_reference(const MulS16Params& p, const int16_t* lhs, const int16_t* rhs,
                                 int16_t* output) {
  reference::for_each_broadcast_element(p.shape, [&](int64_t e, int64_t li, int64_t ri) {
    const int32_t product = int32_t{lhs[li]} * int32_t{rhs[ri]};
    const int32_t out = requantize(product, p.output_multiplier, p.output_shift);
    output[e] = static_cast<int16_t>(clamp(out, p.activation_min, p.activation_max));
  });
}

}  // namespace cortexm
