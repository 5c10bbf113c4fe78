// The params of quantized_batch_matmul <-> fb::MulParams, through the mul codec
// (ops/binary/runtime/binary_codec.h): the table holds mul's offsets, multiplier, shift and activation
// range. The matrix dims are not stored: they come from the tensors.
#pragma once

#include "cortexm/kernels/quantized_batch_matmul.h"
#include "cortexm/kernels/quantized_mul.h"
#include "ops/binary/runtime/binary_codec.h"

namespace cortexm::program {

inline flatbuffers::Offset<fb::MulParams> encode_batch_matmul(flatbuffers::FlatBufferBuilder& b,
                                                              const BatchMatmulParams& p) {
  MulParams mul;
  mul.lhs_offset = p.lhs_offset;
  mul.rhs_offset = p.rhs_offset;
  mul.output_offset = p.output_offset;
  mul.output_multiplier = p.multiplier;
  mul.output_shift = p.shift;
  mul.activation_min = p.activation_min;
  mul.activation_max = p.activation_max;
  return encode_binary(b, mul);
}

// Fills p from the table but its dims.
inline void decode_batch_matmul(const fb::MulParams& t, BatchMatmulParams* p) {
  MulParams mul;
  decode_binary(t, &mul);
  p->lhs_offset = mul.lhs_offset;
  p->rhs_offset = mul.rhs_offset;
  p->output_offset = mul.output_offset;
  p->multiplier = mul.output_multiplier;
  p->shift = mul.output_shift;
  p->activation_min = mul.activation_min;
  p->activation_max = mul.activation_max;
}

}  // namespace cortexm::program
