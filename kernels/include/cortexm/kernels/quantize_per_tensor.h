// cortex_m.quantize_per_tensor / dequantize_per_tensor, int8 and int16.
// quantize: clamp(zero_point + nearbyint(x * (1.0f / scale)), quant_min, quant_max), float32 math
// and round-half-to-even, as PyTorch's quantized_decomposed ops. NaN quantizes as 0.0 does (the zero
// point, clamped); infinities and huge values saturate. dequantize: (q - zero_point) * scale.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cortexm/kernels/status.h"

namespace cortexm {

enum class QuantDtype : uint8_t { kInt8 = 0, kInt16 = 1 };

struct QuantizeParams {
  float scale = 1.0f;
  int32_t zero_point = 0;
  int32_t quant_min = -128;
  int32_t quant_max = 127;
  QuantDtype dtype = QuantDtype::kInt8;
};

// scale finite and > 0; quant_min <= quant_max within the dtype; zero_point within the dtype.
Error quantize_per_tensor_prepare(const QuantizeParams& params);

// The variant this build selects: MVE with floating point (4 lanes) on the Cortex-M55 / M85,
// else the plain loop.
void quantize_per_tensor(const QuantizeParams& params, const float* input, void* output,
                         size_t count);

// Plain-loop reference the MVE variant must match bit for bit.
void quantize_per_tensor_reference(const QuantizeParams& params, const float* input, void* output,
                                   size_t count);

void dequantize_per_tensor(const QuantizeParams& params, const void* input, float* output,
                           size_t count);

}  // namespace cortexm
