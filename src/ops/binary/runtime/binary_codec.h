// The params of the elementwise binary kernels (add, maximum, minimum, mul and their int16 twins):
// one encode (kernel params -> program table) and one decode (table -> kernel params) for all.
// AddParams-like kernels rescale each input (fb::AddParams), MulParams-like ones rescale the
// product (fb::MulParams); the int16 kernels have no offsets and store 0. The broadcast shape is
// not stored: it comes from the tensors.
#pragma once

#include <type_traits>

#include "program/program_generated.h"
#include "runtime/ops/params_codec.h"

namespace cortexm::program {

CORTEXM_PARAMS_HAVE(has_offsets, lhs_offset)

CORTEXM_PARAMS_HAVE(rescales_inputs, lhs_multiplier)

// The program table of kernel params P.
template <class P>
using BinaryTable = std::conditional_t<rescales_inputs<P>::value, fb::AddParams, fb::MulParams>;

template <class P>
flatbuffers::Offset<BinaryTable<P>> encode_binary(flatbuffers::FlatBufferBuilder& b, const P& p) {
  int32_t lhs_offset = 0, rhs_offset = 0, output_offset = 0;
  if constexpr (has_offsets<P>::value) {
    lhs_offset = p.lhs_offset;
    rhs_offset = p.rhs_offset;
    output_offset = p.output_offset;
  }
  if constexpr (rescales_inputs<P>::value) {
    return fb::CreateAddParams(b, lhs_offset, p.lhs_multiplier, p.lhs_shift, rhs_offset,
                               p.rhs_multiplier, p.rhs_shift, output_offset, p.output_multiplier,
                               p.output_shift, p.activation_min, p.activation_max);
  } else {
    return fb::CreateMulParams(b, lhs_offset, rhs_offset, output_offset, p.output_multiplier,
                               p.output_shift, p.activation_min, p.activation_max);
  }
}

// Fills p from the table but its shape.
template <class P>
NonzeroOffset decode_binary(const BinaryTable<P>& t, P* p) {
  if constexpr (has_offsets<P>::value) {
    p->lhs_offset = t.lhs_offset();
    p->rhs_offset = t.rhs_offset();
    p->output_offset = t.output_offset();
  } else {
    if (t.lhs_offset() != 0) return {"lhs_offset", t.lhs_offset()};
    if (t.rhs_offset() != 0) return {"rhs_offset", t.rhs_offset()};
    if (t.output_offset() != 0) return {"output_offset", t.output_offset()};
  }
  if constexpr (rescales_inputs<P>::value) {
    p->lhs_multiplier = t.lhs_multiplier();
    p->lhs_shift = t.lhs_shift();
    p->rhs_multiplier = t.rhs_multiplier();
    p->rhs_shift = t.rhs_shift();
  }
  p->output_multiplier = t.output_multiplier();
  p->output_shift = t.output_shift();
  p->activation_min = t.activation_min();
  p->activation_max = t.activation_max();
  return {};
}

}  // namespace cortexm::program
