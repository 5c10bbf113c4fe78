#include "cortexm/kernels/quantized_maximum.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

void quantized_maximum_reference(const MinMaxParams& p, const int8_t* lhs, const int8_t* rhs,
                                int8_t* output) {
  int64_t index[kMaxBroadcastRank] = {0, 0, 0, 0, 0, 0};
  const int64_t total = p.shape.elements();
  for (int64_t e = 0; e < total; ++e) {
    int64_t li = 0, ri = 0, rem = e;
    for (int d = p.shape.rank - 1; d >= 0; --d) {
      index[d] = rem % p.shape.dims[d];
      rem /= p.shape.dims[d];
      li += index[d] * p.shape.lhs_strides[d];
      ri += index[d] * p.shape.rhs_strides[d];
    }
    const int32_t a = requantize((lhs[li] + p.lhs_offset) * (1 << kMinMaxLeftShift),
                                 p.lhs_multiplier, p.lhs_shift);
    const int32_t b = requantize((rhs[ri] + p.rhs_offset) * (1 << kMinMaxLeftShift),
                                 p.rhs_multiplier, p.rhs_shift);
    const int32_t pick = a > b ? a : b;
    int32_t out = requantize(pick, p.output_multiplier, p.output_shift) + p.output_offset;
    out = out < p.activation_min ? p.activation_min : out;
    out = out > p.activation_max ? p.activation_max : out;
    output[e] = static_cast<int8_t>(out);
  }
}

}  // namespace cortexm
