#include "cortexm/kernels/quantized_magnitude_s16.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

CORTEXM_PREPARE_STEP Error quantized_magnitude_s16_prepare(const MagnitudeParams& p) {
  const int32_t lo = p.int8_output ? -128 : -32768, hi = p.int8_output ? 127 : 32767;
  if (p.size < 0) return invalid("input.numel", p.size, "must be >= 0");
  if (p.multiplier < 0) return invalid("output_multiplier", p.multiplier, "must be in [0, 2^31)");
  if (p.shift < kMinShift || p.shift > kMaxShift)
    return invalid("output_shift", p.shift, "must be in [-31, 30]");
  if (p.output_offset < lo || p.output_offset > hi)
    return invalid("output_zero_point", p.output_offset,
                   p.int8_output ? "must be in [-128, 127]" : "must be in [-32768, 32767]");
  CORTEXM_RETURN_IF_ERROR(check_activation_range(p.activation_min, p.activation_max, !p.int8_output));
  return kOk;
}

// Digit-by-digit square root starting at the highest set bit pair of n (n < 2^62 here).
uint32_t rounded_sqrt(uint64_t n) {
  if (n == 0) return 0;
  const int32_t top = 63 - __builtin_clzll(n);  // highest set bit
  uint64_t bit = uint64_t{1} << (top & ~1);
  uint64_t remainder = n, root = 0;
  for (; bit != 0; bit >>= 2) {
    const uint64_t trial = root + bit;
    root >>= 1;
    if (remainder >= trial) {
      remainder -= trial;
      root += bit;
    }
  }
  return static_cast<uint32_t>(remainder > root ? root + 1 : root);
}

namespace {

template <typename Out>
void magnitude(const MagnitudeParams& params, const int16_t* __restrict real,
               const int16_t* __restrict imag, Out* __restrict output) {
  const MagnitudeParams p = params;
  for (int64_t i = 0; i < p.size; ++i) {
    const int32_t re = real[i], im = imag[i];
    // < 2^31: the squares are at most 2^30 each.
    const uint64_t sum = static_cast<uint32_t>(re * re) + uint64_t{static_cast<uint32_t>(im * im)};
    const uint32_t root = rounded_sqrt(sum << (2 * kMagnitudeFractionBits));
    const int32_t out = static_cast<int32_t>(
        static_cast<uint32_t>(requantize(static_cast<int32_t>(root), p.multiplier, p.shift)) +
        static_cast<uint32_t>(p.output_offset));  // wraps as the target's add
    output[i] = static_cast<Out>(clamp(out, p.activation_min, p.activation_max));
  }
}

}  // namespace

void quantized_magnitude_s16(const MagnitudeParams& p, const int16_t* real, const int16_t* imag,
                             int16_t* output) {
  magnitude(p, real, imag, output);
}

void quantized_magnitude_s16(const MagnitudeParams& p, const int16_t* real, const int16_t* imag,
                             int8_t* output) {
  magnitude(p, real, imag, output);
}

}  // namespace cortexm
