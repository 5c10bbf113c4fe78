// The params of the fully connected kernels (quantized_linear, quantized_linear_s16) <->
// fb::LinearParams: one encode and one decode for both. The int16 kernel has no offsets (nor a
// folded bias) and stores 0. Batches and features are not stored: they come from the tensors.
#pragma once

#include <type_traits>

#include "program/program_generated.h"
#include "runtime/ops/params_codec.h"

namespace cortexm::program {

CORTEXM_PARAMS_HAVE(has_linear_offsets, filter_offset)

template <class P>
flatbuffers::Offset<fb::LinearParams> encode_linear(flatbuffers::FlatBufferBuilder& b, const P& p) {
  const auto multipliers = b.CreateVector(p.multipliers, static_cast<size_t>(p.num_multipliers));
  const auto shifts = b.CreateVector(p.shifts, static_cast<size_t>(p.num_multipliers));
  fb::LinearParamsBuilder t(b);
  if constexpr (has_linear_offsets<P>::value) {
    t.add_input_offset(p.input_offset);
    t.add_filter_offset(p.filter_offset);
    t.add_output_offset(p.output_offset);
    t.add_bias_includes_input_offset(p.bias_includes_input_offset);
  }
  t.add_activation_min(p.activation_min);
  t.add_activation_max(p.activation_max);
  t.add_multipliers(multipliers);
  t.add_shifts(shifts);
  return t.Finish();
}

// Fills p from the table but its shape; multipliers and shifts point into the table (their
// counts are the caller's to check).
template <class P>
NonzeroOffset decode_linear(const fb::LinearParams& t, P* p) {
  if constexpr (has_linear_offsets<P>::value) {
    p->input_offset = t.input_offset();
    p->filter_offset = t.filter_offset();
    p->output_offset = t.output_offset();
    p->bias_includes_input_offset = t.bias_includes_input_offset();
  } else {
    if (t.input_offset() != 0) return {"params.input_offset", t.input_offset()};
    if (t.filter_offset() != 0) return {"params.filter_offset", t.filter_offset()};
    if (t.output_offset() != 0) return {"params.output_offset", t.output_offset()};
    if (t.bias_includes_input_offset()) return {"params.bias_includes_input_offset", 1};
  }
  p->activation_min = t.activation_min();
  p->activation_max = t.activation_max();
  p->multipliers = t.multipliers() ? t.multipliers()->data() : nullptr;
  p->shifts = t.shifts() ? t.shifts()->data() : nullptr;
  p->num_multipliers = t.multipliers() ? static_cast<int32_t>(t.multipliers()->size()) : 0;
  return {};
}

}  // namespace cortexm::program
