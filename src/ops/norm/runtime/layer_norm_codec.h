// The params of quantized_layer_norm <-> fb::QuantizedLayerNormParams, with the count of
// trailing dims normalized. rows / row_size are not stored: they come from the input tensor.
#pragma once

#include "cortexm/kernels/quantized_layer_norm.h"
#include "program/program_generated.h"
#include "runtime/ops/params_codec.h"

namespace cortexm::program {

inline flatbuffers::Offset<fb::QuantizedLayerNormParams> encode_layer_norm(
    flatbuffers::FlatBufferBuilder& b, int32_t normalized_rank, const LayerNormParams& p) {
  return fb::CreateQuantizedLayerNormParams(b, normalized_rank, p.eps_term, p.product_shift,
                                            p.output_offset, p.multiplier, p.shift,
                                            p.activation_min, p.activation_max);
}

// Fills p from the table but its extents (rows, row_size).
inline void decode_layer_norm(const fb::QuantizedLayerNormParams& t, LayerNormParams* p) {
  p->eps_term = t.eps_term();
  p->product_shift = t.product_shift();
  decode_output_requantization(t, p);
}

}  // namespace cortexm::program
