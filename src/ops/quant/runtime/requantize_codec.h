// The params of the requantizing elementwise kernels (requantize_tensor, requantize_s16,
// quantized_magnitude_s16) <-> fb::RequantizeParams: one encode and one decode for all. Kernels
// without an input offset (magnitude) store 0. Sizes and dtypes are not stored: they come from
// the tensors.
#pragma once

#include <type_traits>

#include "program/program_generated.h"
#include "runtime/ops/params_codec.h"

namespace cortexm::program {

CORTEXM_PARAMS_HAVE(has_input_offset, input_offset)

template <class P>
flatbuffers::Offset<fb::RequantizeParams> encode_requantize(flatbuffers::FlatBufferBuilder& b,
                                                            const P& p) {
  int32_t input_offset = 0;
  if constexpr (has_input_offset<P>::value) input_offset = p.input_offset;
  return fb::CreateRequantizeParams(b, input_offset, p.output_offset, p.multiplier, p.shift,
                                    p.activation_min, p.activation_max);
}

// Fills p from the table but its size and dtypes.
template <class P>
NonzeroOffset decode_requantize(const fb::RequantizeParams& t, P* p) {
  if constexpr (has_input_offset<P>::value) {
    p->input_offset = t.input_offset();
  } else if (t.input_offset() != 0) {
    return {"params.input_offset", t.input_offset()};
  }
  decode_output_requantization(t, p);
  return {};
}

}  // namespace cortexm::program
