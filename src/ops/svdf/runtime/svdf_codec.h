// The params of the SVDF kernels <-> fb::QuantizedSvdfStateParams / QuantizedSvdfOutputParams.
// The extents but memory (stage 1) and rank (stage 2) are not stored: they come from the tensors.
#pragma once

#include "ops/svdf/runtime/svdf_kernels.h"
#include "program/program_generated.h"

namespace cortexm::program {

inline flatbuffers::Offset<fb::QuantizedSvdfStateParams> encode_svdf_state(flatbuffers::FlatBufferBuilder& b,
                                                                           const SvdfStateParams& p) {
  return fb::CreateQuantizedSvdfStateParams(b, p.shape.memory, p.input_offset, p.state_zero_point, p.multiplier,
                                            p.shift);
}

inline void decode_svdf_state(const fb::QuantizedSvdfStateParams& t, SvdfStateParams* p) {
  p->shape.memory = t.memory();
  p->input_offset = t.input_offset();
  p->state_zero_point = t.state_zero_point();
  p->multiplier = t.multiplier();
  p->shift = t.shift();
}

inline flatbuffers::Offset<fb::QuantizedSvdfOutputParams> encode_svdf_output(flatbuffers::FlatBufferBuilder& b,
                                                                             const SvdfOutputParams& p) {
  return fb::CreateQuantizedSvdfOutputParams(b, p.shape.rank, p.state_zero_point, p.output_offset, p.multiplier,
                                             p.shift);
}

inline void decode_svdf_output(const fb::QuantizedSvdfOutputParams& t, SvdfOutputParams* p) {
  p->shape.rank = t.rank();
  p->state_zero_point = t.state_zero_point();
  p->output_offset = t.output_offset();
  p->multiplier = t.multiplier();
  p->shift = t.shift();
}

}  // namespace cortexm::program
