// The params of quantize_per_tensor / dequantize_per_tensor <-> fb::QuantizeParams. The
// quantized dtype is not stored: it comes from the quantized tensor.
#pragma once

#include "cortexm/kernels/quantize_per_tensor.h"
#include "program/program_generated.h"

namespace cortexm::program {

inline flatbuffers::Offset<fb::QuantizeParams> encode_quantize(flatbuffers::FlatBufferBuilder& b,
                                                               const QuantizeParams& p) {
  return fb::CreateQuantizeParams(b, p.scale, p.zero_point, p.quant_min, p.quant_max);
}

// Fills p from the table but its dtype.
inline void decode_quantize(const fb::QuantizeParams& t, QuantizeParams* p) {
  p->scale = t.scale();
  p->zero_point = t.zero_point();
  p->quant_min = t.quant_min();
  p->quant_max = t.quant_max();
}

}  // namespace cortexm::program
