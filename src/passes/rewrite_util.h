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

// Node meta naming the value of the quantized (exported) graph whose integers the node's output
// holds: FoldAndAnnotateQParams records it where a quantize folds into its producer, and the passes
// that replace a node move it to the node now producing those integers. cortexm.compare matches
// the float and the int8 model's tensors by it.
inline constexpr const char kFloatValueMeta[] = "float_value";

// Gives the node producing `to` the float value note `name` (nothing when name is empty or `to`
// has no producer).
inline void note_float_value(Graph& graph, ValueId to, const std::string& name) {
  const NodeId producer = graph.producer(to);
  if (name.empty() || producer == kNoNode) return;
  graph.mutable_node(producer).meta[kFloatValueMeta] = name;
}

// `node`'s float value note, "" without one.
inline std::string float_value_of(const Node& node) {
  const auto it = node.meta.find(kFloatValueMeta);
  return it == node.meta.end() ? std::string() : it->second;
}

}  // namespace cortexm
