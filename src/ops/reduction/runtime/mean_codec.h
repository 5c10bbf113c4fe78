// The params of quantized_mean <-> fb::QuantizedMeanParams, with the reduced dims (ascending).
// outer / reduce / inner are not stored: they come from the tensors and the reduced dims.
#pragma once

#include <cstdint>
#include <vector>

#include "cortexm/kernels/quantized_mean.h"
#include "program/program_generated.h"
#include "runtime/ops/params_codec.h"

namespace cortexm::program {

inline flatbuffers::Offset<fb::QuantizedMeanParams> encode_mean(flatbuffers::FlatBufferBuilder& b,
                                                                const std::vector<uint8_t>& reduced,
                                                                const MeanParams& p) {
  const auto dims = b.CreateVector(reduced);
  return fb::CreateQuantizedMeanParams(b, dims, p.input_offset, p.output_offset, p.multiplier,
                                       p.shift, p.activation_min, p.activation_max);
}

// Fills p from the table but its extents (the reduced dims: t.reduced()).
inline void decode_mean(const fb::QuantizedMeanParams& t, MeanParams* p) {
  p->input_offset = t.input_offset();
  decode_output_requantization(t, p);
}

}  // namespace cortexm::program
