// The params of quantized_group_norm <-> fb::QuantizedGroupNormParams. The shape but num_groups is
// not stored: it comes from the input tensor.
#pragma once

#include "ops/group_norm/runtime/group_norm_kernels.h"
#include "program/program_generated.h"

namespace cortexm::program {

inline flatbuffers::Offset<fb::QuantizedGroupNormParams> encode_group_norm(
    flatbuffers::FlatBufferBuilder& b, const QuantizedGroupNormParams& p) {
  const LayerNormParams& n = p.norm;
  return fb::CreateQuantizedGroupNormParams(b, p.shape.groups, n.eps_term, n.product_shift, n.output_offset,
                                            n.multiplier, n.shift, n.activation_min, n.activation_max);
}

// Fills p from the table but the shape's extents and layout.
inline void decode_group_norm(const fb::QuantizedGroupNormParams& t, QuantizedGroupNormParams* p) {
  p->shape.groups = t.num_groups();
  p->norm.eps_term = t.eps_term();
  p->norm.product_shift = t.product_shift();
  p->norm.output_offset = t.output_offset();
  p->norm.multiplier = t.multiplier();
  p->norm.shift = t.shift();
  p->norm.activation_min = t.activation_min();
  p->norm.activation_max = t.activation_max();
}

}  // namespace cortexm::program
