#include "cortexm/kernels/quantized_magnitude_s16.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

namespace {

// Digit-by-digit square root over all 32 result bits: floor(sqrt(n)) and the remainder.
uint32_t reference_rounded_sqrt(uint64_t n) {
  uint64_t remainder = n, root = 0;
  for (uint64_t bit = uint64_t{1} << 62; bit != 0; bit >>= 2) {
    if (remainder >= root + bit) {
      remainder -= root + bit;
      root = (root >> 1) + bit;
    } else {
      root >>= 1;
    }
  }
  // sqrt(n) > root + 1/2 exactly when n - root^2 > root.
  return static_cast<uint32_t>(remainder > root ? root + 1 : root);
}

template <typename Out>
void reference(const MagnitudeParams& p, const int16_t* real, const int16_t* imag, Out* output) {
  for (int64_t i = 0; i < p.size; ++i) {
    const int64_t sum = int64_t{real[i]} * real[i] + int64_t{imag[i]} * imag[i];
    const uint32_t root =
        reference_rounded_sqrt(static_cast<uint64_t>(sum) << (2 * kMagnitudeFractionBits));
    int32_t out = static_cast<int32_t>(
        static_cast<uint32_t>(requantize(static_cast<int32_t>(root), p.multiplier, p.shift)) +
        static_cast<uint32_t>(p.output_offset));  // wraps as the target's add
    out = out < p.activation_min ? p.activation_min : out;
    out = out > p.activation_max ? p.activation_max : out;
    output[i] = static_cast<Out>(out);
  }
}

}  // namespace

void quantized_magnitude_s16_reference(const MagnitudeParams& p, const int16_t* real,
                                       const int16_t* imag, int16_t* output) {
  reference(p, real, imag, output);
}

void quantized_magnitude_s16_reference(const MagnitudeParams& p, const int16_t* real,
                                       const int16_t* imag, int8_t* output) {
  reference(p, real, imag, output);
}

}  // namespace cortexm
