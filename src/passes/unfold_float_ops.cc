// UnfoldFloatOps: an aten compute node still in the folded form (a quantized input or output)
// becomes an explicit float op (docs/lowering.md, step 7): its per-tensor int8 / int16 inputs are
// read through a cortex_m.dequantize_per_tensor (one per value, shared by its readers), other
// quantized constants (per-channel, int32) through float constants dequantized at compile time,
// and each quantized output turns float with a cortex_m.quantize_per_tensor after it that the old
// readers read. The arithmetic is the folded form's, so the outputs do not change.
#include <algorithm>
#include <map>

#include "passes/qparams_util.h"

namespace cortexm {

namespace {

// The float value to read in place of quantized value v, made before node `at` on first use.
ValueId dequantized(Graph& graph, ValueId v, NodeId at, std::map<ValueId, ValueId>& cache) {
  auto it = cache.find(v);
  if (it != cache.end()) return it->second;
  const Value& value = graph.value(v);
  const QuantParams q = *value.info.qparams;
  const DType dtype = value.info.dtype;
  const std::vector<int64_t> dim_order = value.info.dim_order;
  const bool constant = value.kind == ValueKind::kConstant;  // `value` dies with the next edit
  const std::string name = value.name + "_float";
  const std::string source = at == kNoNode ? "" : graph.node(at).source;
  ValueId real = kNoValue;
  if (!q.per_channel() && (dtype == DType::kInt8 || dtype == DType::kInt16)) {
    // An equal cortex_m dequantize already before `at` serves too.
    const Attrs attrs = quant_attrs(q, dtype);
    const auto& order = graph.order();
    const auto end = std::find(order.begin(), order.end(), at);
    for (NodeId r : graph.users(v)) {
      const Node& reader = graph.node(r);
      if (reader.op == kCortexMDequantize && reader.attrs == attrs &&
          std::find(order.begin(), end, r) != end)
        real = reader.outputs[0];
    }
    if (real == kNoValue) real = graph.call(kCortexMDequantize, {v}, attrs, at, name, source)[0];
  } else if (constant) {
    real = dequantized_constant(graph, v, q, dim_order, name);
  } else {
    // No cortex_m op dequantizes these (per-channel or int32 activations): PyTorch's op stays.
    const char* op = q.per_channel() ? kDequantizePerChannel : kDequantize;
    real = graph.call(op, {v}, quant_attrs(q, dtype), at, name, source)[0];
  }
  cache[v] = real;
  return real;
}

}  // namespace

bool unfold_float_ops(Graph& graph, const TargetConfig&) {
  std::map<ValueId, ValueId> cache;
  return rewrite_nodes(graph, [&](NodeId id) {
    if (!is_in_folded_form(graph, graph.node(id))) return false;
    const std::vector<ValueId> inputs = graph.node(id).inputs;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i] != kNoValue && is_quantized(graph.value(inputs[i]).info))
        graph.replace_input(id, i, dequantized(graph, inputs[i], id, cache));
    // Quantized outputs turn float; a quantize after the node gives the old integers.
    std::vector<std::pair<ValueId, Attrs>> quantized;
    for (ValueId out : graph.node(id).outputs) {
      TensorInfo& info = graph.mutable_value(out).info;
      if (!is_quantized(info)) continue;
      quantized.emplace_back(out, quant_attrs(*info.qparams, info.dtype));
      info.dtype = DType::kFloat32;
      info.qparams.reset();
    }
    graph.reinfer(id);
    const std::string source = graph.node(id).source;
    for (const auto& [out, attrs] : quantized) {
      const std::vector<NodeId> readers = graph.users(out);
      const ValueId q = graph.call(kCortexMQuantize, {out}, attrs, node_after(graph, id),
                                   graph.value(out).name + "_q", source)[0];
      redirect(graph, out, q, readers, true);
    }
    Node& node = graph.mutable_node(id);
    if (node.meta.find("lowering") == node.meta.end()) node.meta["lowering"] = "float: not lowered";
    return true;
  });
}

}  // namespace cortexm
