// The params of the softmax kernels (quantized_softmax, quantized_log_softmax) <->
// fb::QuantizedSoftmaxParams, with the dim the rows run along. Softmax has no reverse scaling and
// stores 0. Rows and row size are not stored: they come from the tensors.
#pragma once

#include <type_traits>

#include "cortexm/kernels/quantized_softmax_s16.h"
#include "program/program_generated.h"

namespace cortexm::program {

template <class Scaling, class = void>
struct has_reverse_scaling : std::false_type {};
template <class Scaling>
struct has_reverse_scaling<Scaling, std::void_t<decltype(Scaling::reverse_scaling_divisor)>>
    : std::true_type {};

template <class P>
flatbuffers::Offset<fb::QuantizedSoftmaxParams> encode_softmax(flatbuffers::FlatBufferBuilder& b,
                                                               int32_t dim, const P& p) {
  const auto& s = p.scaling;
  int32_t divisor = 0, right_shift = 0;
  if constexpr (has_reverse_scaling<decltype(p.scaling)>::value) {
    divisor = s.reverse_scaling_divisor;
    right_shift = s.reverse_scaling_right_shift;
  }
  return fb::CreateQuantizedSoftmaxParams(b, dim, s.input_multiplier, s.input_left_shift, s.diff_min,
                                          divisor, right_shift);
}

// Fills p's scaling from the table (its dim: t.dim()).
template <class P>
void decode_softmax(const fb::QuantizedSoftmaxParams& t, P* p) {
  auto& s = p->scaling;
  s.input_multiplier = t.input_multiplier();
  s.input_left_shift = t.input_shift();
  s.diff_min = t.diff_min();
  if constexpr (has_reverse_scaling<decltype(p->scaling)>::value) {
    s.reverse_scaling_divisor = t.reverse_scaling_divisor();
    s.reverse_scaling_right_shift = t.reverse_scaling_right_shift();
  }
}

// quantized_softmax_s16: the same table, input_shift holding its signed requantize shift (diff_min
// and the reverse scaling 0); the exp and reciprocal tables are the op's inputs 1 and 2.
inline flatbuffers::Offset<fb::QuantizedSoftmaxParams> encode_softmax_s16(
    flatbuffers::FlatBufferBuilder& b, int32_t dim, const SoftmaxS16Params& p) {
  return fb::CreateQuantizedSoftmaxParams(b, dim, p.input_multiplier, p.input_shift, 0, 0, 0);
}

inline void decode_softmax_s16(const fb::QuantizedSoftmaxParams& t, SoftmaxS16Params* p) {
  p->input_multiplier = t.input_multiplier();
  p->input_shift = t.input_shift();
}

}  // namespace cortexm::program
