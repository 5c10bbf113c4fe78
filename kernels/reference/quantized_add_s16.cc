#include "cortexm/kernels/quantized_add_s16.h"

#include "broadcast_elements.h"
#include "cortexm/kernels/requantize.h"

namespace cortexm {

void quantized_add_s16_reference(const AddS16Params& p, const int16_t* lhs, const int16_t* rhs,
                                 int16_t* output) {
  reference::for_each_broadcast_element(p.shape, [&](int64_t e, int64_t li, int64_t ri) {
    const int32_t a = requantize(lhs[li] * (1 << kAddS16LeftShift), p.lhs_multiplier, p.lhs_shift);
    const int32_t b = requantize(rhs[ri] * (1 << kAddS16LeftShift), p.rhs_multiplier, p.rhs_shift);
    const int32_t sum = static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
    const int32_t out = requantize(sum, p.output_multiplier, p.output_shift);
    output[e] = static_cast<int16_t>(clamp(out, p.activation_min, p.activation_max));
  });
}

}  // namespace cortexm
