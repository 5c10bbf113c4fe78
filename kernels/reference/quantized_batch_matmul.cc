#include "cortexm/kernels/quantized_batch_matmul.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

void quantized_batch_matmul_reference(const BatchMatmulParams& p, const int8_t* lhs,
                                      const int8_t* rhs, int8_t* output) {
  for (int32_t b = 0; b < p.batch; ++b) {
    for (int32_t m = 0; m < p.lhs_rows; ++m) {
      for (int32_t n = 0; n < p.rhs_rows; ++n) {
        uint32_t acc = 0;  // modulo 2^32, as the target's 32-bit adds
        for (int32_t k = 0; k < p.cols; ++k) {
          const int32_t x = lhs[(int64_t{b} * p.lhs_rows + m) * p.cols + k] + p.lhs_offset;
          const int32_t y = rhs[(int64_t{b} * p.rhs_rows + n) * p.cols + k] + p.rhs_offset;
          acc += static_cast<uint32_t>(x * y);
        }
        const int32_t scaled = requantize(static_cast<int32_t>(acc), p.multiplier, p.shift);
        int32_t out = static_cast<int32_t>(static_cast<uint32_t>(scaled) +
                                           static_cast<uint32_t>(p.output_offset));
        out = out < p.activation_min ? p.activation_min : out;
        out = out > p.activation_max ? p.activation_max : out;
        output[(int64_t{b} * p.lhs_rows + m) * p.rhs_rows + n] = static_cast<int8_t>(out);
      }
    }
  }
}

void quantized_batch_matmul_s16_reference(const BatchMatmulParams& p, const int16_t* lhs,
                                          const int16_t* rhs, int16_t* output) {
  const int32_t reduced = reduce_multiplier(p.multiplier);
  for (int32_t b = 0; b < p.batch; ++b) {
    for (int32_t m = 0; m < p.lhs_rows; ++m) {
      for (int32_t n = 0; n < p.rhs_rows; ++n) {
        int64_t acc = 0;
        for (int32_t k = 0; k < p.cols; ++k)
          acc += int64_t{lhs[(int64_t{b} * p.lhs_rows + m) * p.cols + k]} *
                 rhs[(int64_t{b} * p.rhs_rows + n) * p.cols + k];
        int32_t out = requantize_s64(acc, reduced, p.shift);
        out = out < p.activation_min ? p.activation_min : out;
        out = out > p.activation_max ? p.activation_max : out;
        output[(int64_t{b} * p.lhs_rows + m) * p.rhs_rows + n] = static_cast<int16_t>(out);
      }
    }
  }
}

}  // namespace cortexm
