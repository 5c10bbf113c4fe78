// quantized_maximum and quantized_minimum: one loop, the pick a template parameter (as TFLite
// Micro's maximum_minimum.cc).
#include "cortexm/kernels/quantized_maximum.h"
#include "cortexm/kernels/quantized_minimum.h"
#include "cortexm/kernels/requantize.h"

namespace cortexm {

namespace {

// Each input at the common scale: (x + offset) << 20, requantized.
inline int32_t to_common(int32_t x, int32_t offset, int32_t multiplier, int32_t shift) {
  return requantize((x + offset) * (1 << kMinMaxLeftShift), multiplier, shift);
}

template <bool kMax>
void minmax(const MinMaxParams& params, const int8_t* lhs, const int8_t* rhs, int8_t* output) {
  const MinMaxParams p = params;  // a local copy: output stores cannot alias it
  // Per input, the 256 values at the common scale, computed once.
  int32_t lhs_table[256], rhs_table[256];
  for (int32_t x = -128; x < 128; ++x) {
    lhs_table[x + 128] = to_common(x, p.lhs_offset, p.lhs_multiplier, p.lhs_shift);
    rhs_table[x + 128] = to_common(x, p.rhs_offset, p.rhs_multiplier, p.rhs_shift);
  }
  for_each_broadcast_run(p.shape, [&](int64_t li, int64_t ri, int32_t count, int32_t ls, int32_t rs) {
    const int8_t* a = lhs + li;
    const int8_t* b = rhs + ri;
    int8_t* out = output;
    output += count;
    for (int32_t i = 0; i < count; ++i) {
      const int32_t x = lhs_table[a[i * ls] + 128], y = rhs_table[b[i * rs] + 128];
      const int32_t pick = kMax ? (x > y ? x : y) : (x < y ? x : y);
      out[i] = static_cast<int8_t>(
          clamp(wrapping_add(
              requantize(pick, p.output_multiplier, p.output_shift), p.output_offset),
                p.activation_min, p.activation_max));
    }
  });
}

}  // namespace

void quantized_maximum(const MinMaxParams& params, const int8_t* lhs, const int8_t* rhs,
                       int8_t* output) {
  minmax<true>(params, lhs, rhs, output);
}

void quantized_minimum(const MinMaxParams& params, const int8_t* lhs, const int8_t* rhs,
                       int8_t* output) {
  minmax<false>(params, lhs, rhs, output);
}

}  // namespace cortexm
