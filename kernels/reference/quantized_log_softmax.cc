#include "cortexm/kernels/fixed_point.h"
#include "cortexm/kernels/quantized_log_softmax.h"

namespace cortexm {

void quantized_log_softmax_reference(const LogSoftmaxParams& p, const int8_t* input,
                                     int8_t* output) {
  using namespace fixed_point;
  const LogSoftmaxScaling& s = p.scaling;
  for (int32_t r = 0; r < p.rows; ++r) {
    const int8_t* in = input + int64_t{r} * p.row_size;
    int8_t* out = output + int64_t{r} * p.row_size;
    const int32_t max = row_max(in, p.row_size);
    int64_t sum = 0;
    for (int32_t c = 0; c < p.row_size; ++c) {
      const int32_t diff = in[c] - max;
      if (diff < s.diff_min) continue;
      const int32_t scaled = scaled_diff(diff, s.input_multiplier, s.input_left_shift);
      sum += rounding_divide_by_pot(exp_on_negative_values(scaled), 12);
    }
    const int32_t log_sum = log_q12_to_q5(static_cast<int32_t>(sum > INT32_MAX ? INT32_MAX : sum));
    const int32_t reverse = rounding_divide_by_pot(
        saturating_rounding_doubling_high_mul(log_sum + INT32_MIN, s.reverse_scaling_divisor),
        s.reverse_scaling_right_shift);
    const int32_t adjusted_diff_min = s.diff_min - 1 > reverse ? s.diff_min - 1 : reverse;
    for (int32_t c = 0; c < p.row_size; ++c) {
      const int32_t diff = in[c] - max;
      if (diff <= adjusted_diff_min) {
        out[c] = -128;
        continue;
      }
      const int32_t scaled = scaled_diff(diff, s.input_multiplier, s.input_left_shift);
      int32_t v = rounding_divide_by_pot(wrapping_sub(scaled, log_sum), 22) + 127;
      out[c] = static_cast<int8_t>(v < -128 ? -128 : (v > 127 ? 127 : v));
    }
  }
}

}  // namespace cortexm
