#include "cortexm/kernels/quantize_per_tensor.h"

#include <cfloat>

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

template <typename T>
void quantize(const QuantizeParams& p, const float* input, T* output, size_t count) {
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

template <typename T>
void dequantize(const QuantizeParams& p, const T* input, float* output, size_t count) {
  const float scale = p.scale;
  const int32_t zero_point = p.zero_point;
  for (size_t i = 0; i < count; ++i)
    output[i] = static_cast<float>(int32_t{input[i]} - zero_point) * scale;
}

}  // namespace

Error quantize_per_tensor_prepare(const QuantizeParams& p) {
  const bool is_int8 = p.dtype == QuantDtype::kInt8;
  if (!is_int8 && p.dtype != QuantDtype::kInt16)
    return invalid("dtype", static_cast<int64_t>(p.dtype), "must be int8 or int16");
  const int32_t type_min = is_int8 ? -128 : -32768;
  const int32_t type_max = is_int8 ? 127 : 32767;
  const char* in_range = is_int8 ? "must be in [-128, 127] for int8"
                                 : "must be in [-32768, 32767] for int16";
  // Error carries an integer value: report the scale's float bits when it is bad.
  if (!(p.scale > 0.0f) || p.scale > FLT_MAX) {
    uint32_t bits = 0;
    __builtin_memcpy(&bits, &p.scale, sizeof(bits));
    return invalid("scale", bits, "(float32 bits) must be finite and > 0");
  }
  if (p.zero_point < type_min || p.zero_point > type_max)
    return invalid("zero_point", p.zero_point, in_range);
  if (p.quant_min < type_min || p.quant_min > type_max)
    return invalid("quant_min", p.quant_min, in_range);
  if (p.quant_max < type_min || p.quant_max > type_max)
    return invalid("quant_max", p.quant_max, in_range);
  if (p.quant_min > p.quant_max)
    return invalid("quant_min", p.quant_min, "must be <= quant_max");
  return kOk;
}

void quantize_per_tensor(const QuantizeParams& params, const float* input, void* output,
                         size_t count) {
  if (params.dtype == QuantDtype::kInt8)
    quantize(params, input, static_cast<int8_t*>(output), count);
  else
    quantize(params, input, static_cast<int16_t*>(output), count);
}

void dequantize_per_tensor(const QuantizeParams& params, const void* input, float* output,
                           size_t count) {
  if (params.dtype == QuantDtype::kInt8)
    dequantize(params, static_cast<const int8_t*>(input), output, count);
  else
    dequantize(params, static_cast<const int16_t*>(input), output, count);
}

}  // namespace cortexm
