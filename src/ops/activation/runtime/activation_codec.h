// The params of the table activations (quantized_activation, quantized_activation_s16) <->
// fb::ActivationParams: the table has no fields; the lookup table is the op's input 1 and the
// element count comes from the tensors.
#pragma once

#include "program/program_generated.h"

namespace cortexm::program {

inline flatbuffers::Offset<fb::ActivationParams> encode_activation(flatbuffers::FlatBufferBuilder& b) {
  return fb::CreateActivationParams(b);
}

}  // namespace cortexm::program
