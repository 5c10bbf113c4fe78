// Small helpers the passes share for replacing one node by another.
#pragma once

#include "passes/pass.h"

namespace cortexm {

// The new value takes over the old one's quantization (dtype, qparams) and dim order, then every
// reader of the old value reads the new one.
inline void take_over(Graph& graph, ValueId old_value, ValueId new_value) {
  const TensorInfo old_info = graph.value(old_value).info;
  TensorInfo& info = graph.mutable_value(new_value).info;
  info.dtype = old_info.dtype;
  info.qparams = old_info.qparams;
  info.dim_order = old_info.dim_order;
  graph.replace_all_uses(old_value, new_value);
}

}  // namespace cortexm
