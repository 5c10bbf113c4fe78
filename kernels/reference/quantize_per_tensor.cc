// Plain-loop quantize_per_tensor: the scalar kernel, and what the MVE variant must match.
#include "cortexm/kernels/quantize_per_tensor.h"

namespace cortexm {

namespace {

constexpr float kTwoPow23 = 8388608.0f;

// Nearest integer, halves to even, for |v| <= 2^23, in the default round-to-nearest-even mode:
// adding 2^23 pushes the fraction bits out of the float32 mantissa. Branch-free and no libm, so it
// vectorizes on the host and compiles for soft-float cores.
inline float round_half_even(float v) {
  const float rounded = (__builtin_fabsf(v) + kTwoPow23) - kTwoPow23;
  return __builtin_copysignf(rounded, v);
}

// In place (the planner's in_place_narrowing), `output` starts at `input`'s first byte: element i
// (1 or 2 bytes) lands on bytes of floats 0..i, all read by then. Stores through a may_alias type so
// the compiler keeps every load of a float before the stores after it (an int16 store and a float
// load are otherwise assumed not to overlap and could be reordered).
template <typename T>
void quantize(const QuantizeParams& p, const float* input, T* output_, size_t count) {
  typedef T __attribute__((may_alias)) Stored;
  Stored* output = output_;
  const float inv_scale = 1.0f / p.scale;
  // clamp(zero_point + round(v), quant_min, quant_max) == zero_point + round(clamp(v, lo, hi)) for
  // integral lo, hi; clamping first keeps the cast defined for huge values and infinities.
  const float lo = static_cast<float>(p.quant_min - p.zero_point);
  const float hi = static_cast<float>(p.quant_max - p.zero_point);
  const int32_t zero_point = p.zero_point;
  for (size_t i = 0; i < count; ++i) {
    float v = input[i] * inv_scale;
    v = v == v ? v : 0.0f;  // NaN quantizes as 0.0 does
    v = v < lo ? lo : v;
    v = v > hi ? hi : v;
    output[i] = static_cast<T>(zero_point + static_cast<int32_t>(round_half_even(v)));
  }
}

}  // namespace

void quantize_per_tensor_reference(const QuantizeParams& params, const float* input, void* output,
                                   size_t count) {
  if (params.dtype == QuantDtype::kInt8)
    quantize(params, input, static_cast<int8_t*>(output), count);
  else
    quantize(params, input, static_cast<int16_t*>(output), count);
}

}  // namespace cortexm
