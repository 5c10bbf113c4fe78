// The params of View (view_copy, squeeze_copy, unsqueeze_copy): none; the output's shape comes
// from its tensor.
#pragma once

#include "graph/op_schema.h"
#include "program/params_builder.h"

namespace cortexm::program {

inline EncodedOp encode_view(ParamsBuilder& b, const NodeContext&) {
  return encoded(fb::KernelId_View, fb::CreateViewParams(b.fbb()));
}

}  // namespace cortexm::program
