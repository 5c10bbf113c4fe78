#include "cortexm/kernels/quantized_linear_s16.h"

#include "cortexm/kernels/quantized_linear_s16w16.h"
#include "cortexm/kernels/requantize.h"

namespace cortexm {

namespace {

// Both weight types: int8 (16x8) and int16 (16x16).
template <class W>
void reference_linear_s16(const LinearS16Params& p, const int16_t* input, const W* weights,
                          const int64_t* bias, int16_t* output) {
  for (int32_t b = 0; b < p.batches; ++b) {
    for (int32_t oc = 0; oc < p.output_features; ++oc) {
      int64_t sum = 0;
      for (int32_t k = 0; k < p.input_features; ++k)
        sum += int64_t{input[int64_t{b} * p.input_features + k]} *
               weights[int64_t{oc} * p.input_features + k];
      // The bias is added modulo 2^64, as the target's 64-bit add does.
      const int64_t acc = static_cast<int64_t>(static_cast<uint64_t>(sum) +
                                               static_cast<uint64_t>(bias ? bias[oc] : 0));
      const int32_t m = p.num_multipliers == 1 ? 0 : oc;
      int32_t out = requantize_s64(acc, reduce_multiplier(p.multipliers[m]), p.shifts[m]);
      out = out < p.activation_min ? p.activation_min : out;
      out = out > p.activation_max ? p.activation_max : out;
      output[int64_t{b} * p.output_features + oc] = static_cast<int16_t>(out);
    }
  }
}

}  // namespace

void quantized_linear_s16_reference(const LinearS16Params& p, const int16_t* input,
                                    const int8_t* weights, const int64_t* bias, int16_t* output) {
  reference_linear_s16(p, input, weights, bias, output);
}

void quantized_linear_s16w16_reference(const LinearS16W16Params& p, const int16_t* input,
                                       const int16_t* weights, const int64_t* bias,
                                       int16_t* output) {
  reference_linear_s16(p, input, weights, bias, output);
}

}  // namespace cortexm
