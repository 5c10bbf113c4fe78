#include "cortexm/kernels/quantized_add.h"

#include "broadcast_elements.h"
#include "cortexm/kernels/requantize.h"

namespace cortexm {

namespace {

// Both inputs rescaled to the common scale, then combine(lhs, rhs) requantized to the output. With
// shifts above 0 the rescaled inputs may be near the int32 limits: combine wraps, as the Cortex-M does.
template <class Combine>
void rescaled_reference(const RescaledBinaryParams& p, const int8_t* lhs, const int8_t* rhs,
                        int8_t* output, Combine combine) {
  reference::for_each_broadcast_element(p.shape, [&](int64_t e, int64_t li, int64_t ri) {
    const int32_t a = (lhs[li] + p.lhs_offset) * (1 << kAddLeftShift);
    const int32_t b = (rhs[ri] + p.rhs_offset) * (1 << kAddLeftShift);
    const int32_t combined = combine(requantize(a, p.lhs_multiplier, p.lhs_shift),
                                     requantize(b, p.rhs_multiplier, p.rhs_shift));
    const int32_t out = wrapping_add(
        requantize(combined, p.output_multiplier, p.output_shift), p.output_offset);
    output[e] = static_cast<int8_t>(clamp(out, p.activation_min, p.activation_max));
  });
}

}  // namespace

void quantized_add_reference(const AddParams& p, const int8_t* lhs, const int8_t* rhs,
                             int8_t* output) {
  rescaled_reference(p, lhs, rhs, output, [](int32_t a, int32_t b) { return wrapping_add(a, b); });
}

void quantized_sub_reference(const SubParams& p, const int8_t* lhs, const int8_t* rhs,
                             int8_t* output) {
  rescaled_reference(p, lhs, rhs, output, [](int32_t a, int32_t b) { return wrapping_sub(a, b); });
}

}  // namespace cortexm
