// Helpers the quantization passes share: qparams read off quantize / dequantize nodes, written
// back as attributes, shown as short strings; small rewiring steps.
#pragma once

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "graph/errors.h"
#include "graph/quantized_form.h"
#include "ops/quant/quant_attrs.h"
#include "ops/quant/quant_op_names.h"
#include "passes/pass.h"

namespace cortexm {

inline bool is_decomposed_dequantize(const std::string& op) {
  return op == kDequantize || op == kDequantizePerChannel;
}

// The qparams a quantize / dequantize node's attributes describe (per-channel axis normalized).
inline QuantParams node_qparams(const Graph& graph, const Node& node) {
  const bool per_channel = node.op.find("_per_channel.") != std::string::npos;
  const TensorInfo& in = graph.value(node.inputs.at(0)).info;
  const OpArgs args(node.op, node.name, node.attrs);
  return ops::quant_params_from_attrs(args, per_channel, in.rank(), in.shape);
}

inline DType node_dtype(const Node& node) {
  return OpArgs(node.op, node.name, node.attrs).dtype("dtype");
}

// Attributes of a per-tensor or per-channel quantize / dequantize node for q.
inline Attrs quant_attrs(const QuantParams& q, DType dtype) {
  if (q.per_channel())
    return {{"scales", q.scales},       {"zero_points", q.zero_points}, {"axis", q.axis},
            {"quant_min", q.quant_min}, {"quant_max", q.quant_max},     {"dtype", dtype}};
  return {{"scale", q.scales.at(0)},
          {"zero_point", q.zero_points.at(0)},
          {"quant_min", q.quant_min},
          {"quant_max", q.quant_max},
          {"dtype", dtype}};
}

// "int8 q(0.0235, -3)" or "int8 q(axis 0, 16 scales)".
inline std::string qparams_string(DType dtype, const QuantParams& q) {
  std::ostringstream os;
  os << dtype_name(dtype) << " q(";
  if (q.per_channel())
    os << "axis " << q.axis << ", " << q.scales.size() << " scales";
  else if (!q.scales.empty())
    os << q.scales[0] << ", " << q.zero_points[0];
  os << ")";
  return os.str();
}

inline bool is_live(const Graph& graph, NodeId id) {
  return std::find(graph.order().begin(), graph.order().end(), id) != graph.order().end();
}

// The node after `id` in execution order (kNoNode at the end): where to insert a successor.
inline NodeId node_after(const Graph& graph, NodeId id) {
  const auto& order = graph.order();
  auto it = std::find(order.begin(), order.end(), id);
  if (it == order.end() || ++it == order.end()) return kNoNode;
  return *it;
}

// Readers of `from` among `readers`, and the graph outputs if `outputs`, read `to` instead.
inline void redirect(Graph& graph, ValueId from, ValueId to, const std::vector<NodeId>& readers,
                     bool outputs) {
  for (NodeId r : readers) {
    const std::vector<ValueId> inputs = graph.node(r).inputs;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i] == from) graph.replace_input(r, i, to);
  }
  if (!outputs || !graph.is_graph_output(from)) return;
  std::vector<ValueId> outs = graph.outputs();
  std::replace(outs.begin(), outs.end(), from, to);
  graph.set_outputs(outs);
}

// A new float constant: the integer constant `quantized` dequantized with q at compile time (the
// arithmetic of the dequantize ops), laid out in dim_order.
inline ValueId dequantized_constant(Graph& graph, ValueId quantized, const QuantParams& q,
                                    const std::vector<int64_t>& dim_order,
                                    const std::string& name) {
  const Value& c = graph.value(quantized);
  if (c.kind != ValueKind::kConstant)
    throw GraphError("'" + c.name + "' is not a constant: cannot dequantize it at compile time");
  Tensor view = c.data;  // shares the bytes; the info copy takes q
  view.mutable_info().qparams = q;
  Tensor real = dequantize_tensor(view);
  real.mutable_info().dim_order = dim_order;
  return graph.add_constant(name, real);
}

// FoldAndAnnotateQParams' step for one node: folds its dequantize inputs and quantize outputs
// when the rules allow and records meta. Returns whether the graph changed.
bool fold_qparams_into(Graph& graph, NodeId node);

}  // namespace cortexm
