#include "cortexm/kernels/requantize_s16.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

namespace {

template <typename In, typename Out>
void reference(const RequantizeS16Params& p, const In* input, Out* output) {
  for (int64_t i = 0; i < p.size; ++i) {
    const int32_t centered = input[i] + p.input_offset;
    const int32_t scaled = requantize(centered * (1 << p.left_shift()), p.multiplier, p.shift);
    int32_t out = static_cast<int32_t>(static_cast<uint32_t>(scaled) +
                                       static_cast<uint32_t>(p.output_offset));
    out = out < p.activation_min ? p.activation_min : out;
    out = out > p.activation_max ? p.activation_max : out;
    output[i] = static_cast<Out>(out);
  }
}

}  // namespace

void requantize_s16_reference(const RequantizeS16Params& p, const int16_t* input, int8_t* output) {
  reference(p, input, output);
}

void requantize_s16_reference(const RequantizeS16Params& p, const int8_t* input, int16_t* output) {
  reference(p, input, output);
}

void requantize_s16_reference(const RequantizeS16Params& p, const int16_t* input,
                              int16_t* output) {
  reference(p, input, output);
}

}  // namespace cortexm
