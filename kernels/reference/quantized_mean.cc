#include "cortexm/kernels/quantized_mean.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

namespace {

template <class T>
void mean_reference(const MeanParams& p, const T* input, T* output) {
  for (int32_t o = 0; o < p.outer; ++o) {
    for (int32_t i = 0; i < p.inner; ++i) {
      int32_t sum = 0;
      for (int32_t r = 0; r < p.reduce; ++r)
        sum += input[(int64_t{o} * p.reduce + r) * p.inner + i] + p.input_offset;
      int32_t v = wrapping_add(requantize(sum, p.multiplier, p.shift), p.output_offset);
      v = v < p.activation_min ? p.activation_min : v;
      v = v > p.activation_max ? p.activation_max : v;
      output[int64_t{o} * p.inner + i] = static_cast<T>(v);
    }
  }
}

}  // namespace

void quantized_mean_reference(const MeanParams& p, const int8_t* input, int8_t* output) {
  mean_reference(p, input, output);
}

void quantized_mean_s16_reference(const MeanParams& p, const int16_t* input, int16_t* output) {
  mean_reference(p, input, output);
}

}  // namespace cortexm
