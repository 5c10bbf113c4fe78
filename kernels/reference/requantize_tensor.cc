#include "cortexm/kernels/requantize_tensor.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

void requantize_tensor_reference(const RequantizeParams& p, const int8_t* input, int8_t* output) {
  for (int64_t i = 0; i < p.size; ++i) {
    const int32_t x = input[i] + p.input_offset;
    const int32_t scaled = requantize(x * (1 << kRequantizeLeftShift), p.multiplier, p.shift);
    int32_t out = wrapping_add(scaled, p.output_offset);
    out = out < p.activation_min ? p.activation_min : out;
    out = out > p.activation_max ? p.activation_max : out;
    output[i] = static_cast<int8_t>(out);
  }
}

}  // namespace cortexm
