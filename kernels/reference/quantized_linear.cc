#include "cortexm/kernels/quantized_linear.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

// The accumulator is 32 bits and wraps, as on the target; unsigned arithmetic keeps that defined.
void quantized_linear_reference(const LinearParams& p, const int8_t* input,
                                const int8_t* weights, const int32_t* bias, int8_t* output) {
  for (int32_t b = 0; b < p.batches; ++b) {
    for (int32_t oc = 0; oc < p.output_features; ++oc) {
      uint32_t acc = bias ? static_cast<uint32_t>(bias[oc]) : 0u;
      for (int32_t k = 0; k < p.input_features; ++k) {
        const int32_t x = input[int64_t{b} * p.input_features + k] + p.input_offset;
        const int32_t w = weights[int64_t{oc} * p.input_features + k] + p.filter_offset;
        acc += static_cast<uint32_t>(x * w);
      }
      const int32_t m = p.num_multipliers == 1 ? 0 : oc;
      // requantize can return -(2^31 - 1): the output offset wraps as the 32-bit add does.
      int32_t out = wrapping_add(requantize(static_cast<int32_t>(acc), p.multipliers[m], p.shifts[m]),
                                 p.output_offset);
      out = out < p.activation_min ? p.activation_min : out;
      out = out > p.activation_max ? p.activation_max : out;
      output[int64_t{b} * p.output_features + oc] = static_cast<int8_t>(out);
    }
  }
}

}  // namespace cortexm
