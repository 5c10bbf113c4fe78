#include "cortexm/kernels/quantize_per_tensor.h"

#include <cfloat>

#include "variants.h"

#if CORTEXM_BUILT_ISA == 2 && (__ARM_FEATURE_MVE & 2)
#include <arm_mve.h>
#endif

namespace cortexm {

namespace {

// MVE with floating point (Cortex-M55, M85): 4 floats per vector, the same float32 multiply,
// NaN -> 0, clamp, then VRINTN (nearest, halves to even: exactly round_half_even) and VCVT of an
// integral value; predicated tail. Bit-identical with quantize_per_tensor_reference. In place
// (output at input's first byte) each 4-float block is loaded before its 4 or 8 bytes are stored
// over floats already read (block i's bytes lie over floats 0..i+3), in block order.
#if CORTEXM_BUILT_ISA == 2 && (__ARM_FEATURE_MVE & 2)
template <typename T>
void quantize_mve(const QuantizeParams& p, const float* input, T* output, size_t count) {
  const float inv_scale = 1.0f / p.scale;
  const float32x4_t lo = vdupq_n_f32(static_cast<float>(p.quant_min - p.zero_point));
  const float32x4_t hi = vdupq_n_f32(static_cast<float>(p.quant_max - p.zero_point));
  const float32x4_t zero = vdupq_n_f32(0.0f);
  const int32_t zero_point = p.zero_point;  // a local: the stores may alias p
  for (size_t i = 0; i < count; i += 4) {
    const mve_pred16_t lanes = vctp32q(static_cast<uint32_t>(count - i));
    float32x4_t v = vmulq_n_f32(vldrwq_z_f32(input + i, lanes), inv_scale);
    v = vpselq_f32(v, zero, vcmpeqq_f32(v, v));
    v = vminnmq_f32(vmaxnmq_f32(v, lo), hi);
    const int32x4_t q = vaddq_n_s32(vcvtq_s32_f32(vrndnq_f32(v)), zero_point);
    if constexpr (sizeof(T) == 1)
      vstrbq_p_s32(reinterpret_cast<int8_t*>(output + i), q, lanes);
    else
      vstrhq_p_s32(reinterpret_cast<int16_t*>(output + i), q, lanes);
  }
}
#endif

template <typename T>
void dequantize(const QuantizeParams& p, const T* input, float* output, size_t count) {
  const float scale = p.scale;
  const int32_t zero_point = p.zero_point;
  for (size_t i = 0; i < count; ++i)
    output[i] = static_cast<float>(int32_t{input[i]} - zero_point) * scale;
}

}  // namespace

CORTEXM_PREPARE_STEP Error quantize_per_tensor_prepare(const QuantizeParams& p) {
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
#if CORTEXM_BUILT_ISA == 2 && (__ARM_FEATURE_MVE & 2)
  if (params.dtype == QuantDtype::kInt8)
    quantize_mve(params, input, static_cast<int8_t*>(output), count);
  else
    quantize_mve(params, input, static_cast<int16_t*>(output), count);
#else
  quantize_per_tensor_reference(params, input, output, count);
#endif
}

void dequantize_per_tensor(const QuantizeParams& params, const void* input, float* output,
                           size_t count) {
  if (params.dtype == QuantDtype::kInt8)
    dequantize(params, static_cast<const int8_t*>(input), output, count);
  else
    dequantize(params, static_cast<const int16_t*>(input), output, count);
}

}  // namespace cortexm
