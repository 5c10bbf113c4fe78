// What the op families' params codecs (src/ops/<family>/runtime/*_codec.h) share: whether kernel
// params have a field, the stored offset params without offsets cannot take, and the output
// requantization fields of a table.
#pragma once

#include <cstdint>
#include <type_traits>

namespace cortexm::program {

// has_member<P, Member>: whether Member<P> (a field's type, e.g. decltype(P::lhs_offset)) is
// well-formed, i.e. kernel params P have that field.
template <class P, template <class> class Member, class = void>
struct has_member : std::false_type {};
template <class P, template <class> class Member>
struct has_member<P, Member, std::void_t<Member<P>>> : std::true_type {};

// Declares the trait `name`<P>: whether kernel params P have the field `field`.
#define CORTEXM_PARAMS_HAVE(name, field)     \
  template <class P>                         \
  using name##_field_t = decltype(P::field); \
  template <class P>                         \
  using name = has_member<P, name##_field_t>;

// A stored offset that kernel params without offsets (int16) cannot take.
struct NonzeroOffset {
  const char* field = nullptr;  // nullptr: none
  int32_t value = 0;
};

// Copies the fields a table of a single-multiplier requantizing kernel shares with its params:
// output_offset, multiplier, shift and the activation range.
template <class Table, class P>
void decode_output_requantization(const Table& t, P* p) {
  p->output_offset = t.output_offset();
  p->multiplier = t.multiplier();
  p->shift = t.shift();
  p->activation_min = t.activation_min();
  p->activation_max = t.activation_max();
}

}  // namespace cortexm::program
