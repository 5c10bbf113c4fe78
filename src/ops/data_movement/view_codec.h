// The params of View (view_copy, squeeze_copy, unsqueeze_copy): none; the output's shape comes
// from its tensor. And the descriptor the three share.
#pragma once

#include <utility>

#include "graph/op_schema.h"
#include "program/params_builder.h"

namespace cortexm::program {

inline EncodedOp encode_view(ParamsBuilder& b, const NodeContext&) {
  return encoded(fb::KernelId_View, fb::CreateViewParams(b.fbb()));
}

}  // namespace cortexm::program

namespace cortexm::ops {

// The descriptor the reshape views share: one input whose elements the output keeps in order,
// aliased when planned in place, at the input's qparams, run by View. infer and kernel are each's.
inline OpSchema view_schema(const char* name, AttrSpec shape_attr) {
  OpSchema s;
  s.name = name;
  s.inputs = {{"self"}};
  s.attrs = {std::move(shape_attr)};
  s.is_view = true;
  s.keeps_element_order = true;
  s.layout_following_inputs = {0};
  s.is_data_movement = true;
  s.keeps_qparams = true;
  s.encode = program::encode_view;
  return s;
}

}  // namespace cortexm::ops
