#include "cortexm/kernels/fixed_point.h"
#include "cortexm/kernels/quantized_softmax.h"

namespace cortexm {

void quantized_softmax_reference(const SoftmaxParams& p, const int8_t* input, int8_t* output) {
  using namespace fixed_point;
  const SoftmaxScaling& s = p.scaling;
  for (int32_t r = 0; r < p.rows; ++r) {
    const int8_t* in = input + int64_t{r} * p.row_size;
    int8_t* out = output + int64_t{r} * p.row_size;
    const int32_t max = row_max(in, p.row_size);
    uint32_t sum = 0;
    for (int32_t c = 0; c < p.row_size; ++c) {
      const int32_t diff = in[c] - max;
      if (diff < s.diff_min) continue;
      const int32_t scaled = scaled_diff(diff, s.input_multiplier, s.input_left_shift);
      sum += static_cast<uint32_t>(rounding_divide_by_pot(exp_on_negative_values(scaled), 12));
    }
    const int32_t headroom = count_leading_zeros(sum);
    const int32_t shifted_sum_minus_one =
        static_cast<int32_t>((sum << headroom) - (uint32_t{1} << 31));
    const int32_t reciprocal = one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one);
    for (int32_t c = 0; c < p.row_size; ++c) {
      const int32_t diff = in[c] - max;
      if (diff < s.diff_min) {
        out[c] = -128;
        continue;
      }
      const int32_t scaled = scaled_diff(diff, s.input_multiplier, s.input_left_shift);
      const int32_t e = exp_on_negative_values(scaled);
      int32_t v = rounding_divide_by_pot(saturating_rounding_doubling_high_mul(reciprocal, e),
                                         12 - headroom + 23) -
                  128;
      out[c] = static_cast<int8_t>(v < -128 ? -128 : (v > 127 ? 127 : v));
    }
  }
}

}  // namespace cortexm
