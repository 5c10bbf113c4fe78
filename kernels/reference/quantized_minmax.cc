// The references of quantized_maximum and quantized_minimum: one walk, the pick a parameter.
#include "broadcast_elements.h"
#include "cortexm/kernels/quantized_maximum.h"
#include "cortexm/kernels/quantized_minimum.h"
#include "cortexm/kernels/requantize.h"

namespace cortexm {

namespace {

template <bool kMax>
void minmax_reference(const MinMaxParams& p, const int8_t* lhs, const int8_t* rhs, int8_t* output) {
  reference::for_each_broadcast_element(p.shape, [&](int64_t e, int64_t li, int64_t ri) {
    const int32_t a = requantize((lhs[li] + p.lhs_offset) * (1 << kMinMaxLeftShift),
                                 p.lhs_multiplier, p.lhs_shift);
    const int32_t b = requantize((rhs[ri] + p.rhs_offset) * (1 << kMinMaxLeftShift),
                                 p.rhs_multiplier, p.rhs_shift);
    const int32_t pick = kMax ? (a > b ? a : b) : (a < b ? a : b);
    const int32_t out = wrapping_add(
        requantize(pick, p.output_multiplier, p.output_shift), p.output_offset);
    output[e] = static_cast<int8_t>(clamp(out, p.activation_min, p.activation_max));
  });
}

}  // namespace

void quantized_maximum_reference(const MinMaxParams& p, const int8_t* lhs, const int8_t* rhs,
                                 int8_t* output) {
  minmax_reference<true>(p, lhs, rhs, output);
}

void quantized_minimum_reference(const MinMaxParams& p, const int8_t* lhs, const int8_t* rhs,
                                 int8_t* output) {
  minmax_reference<false>(p, lhs, rhs, output);
}

}  // namespace cortexm
