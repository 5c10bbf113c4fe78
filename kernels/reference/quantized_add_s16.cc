#include "cortexm/kernels/quantized_add_s16.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

void quantized_add_s16_reference(const AddS16Params& p, const int16_t* lhs, const int16_t* rhs,
                                 int16_t* output) {
  const int64_t total = p.shape.elements();
  for (int64_t e = 0; e < total; ++e) {
    int64_t li = 0, ri = 0, rem = e;
    for (int d = p.shape.rank - 1; d >= 0; --d) {
      const int64_t index = rem % p.shape.dims[d];
      rem /= p.shape.dims[d];
      li += index * p.shape.lhs_strides[d];
      ri += index * p.shape.rhs_strides[d];
    }
    const int32_t a = requantize(lhs[li] * (1 << kAddS16LeftShift), p.lhs_multiplier, p.lhs_shift);
    const int32_t b = requantize(rhs[ri] * (1 << kAddS16LeftShift), p.rhs_multiplier, p.rhs_shift);
    const int32_t sum = static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
    int32_t out = requantize(sum, p.output_multiplier, p.output_shift);
    out = out < p.activation_min ? p.activation_min : out;
    out = out > p.activation_max ? p.activation_max : out;
    output[e] = static_cast<int16_t>(out);
  }
}

}  // namespace cortexm
