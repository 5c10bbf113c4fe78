// PropagateQParams: a dequantize feeding permute_copy / view_copy / squeeze_copy /
// unsqueeze_copy moves after it, so the data movement runs on the integers and a consumer such
// as addmm sees a dequantized, permuted weight it can fold (docs/lowering.md, step 2).
// Per-channel axes follow a permute; through a view / squeeze / unsqueeze only when the axis dim
// survives unambiguously. The consumers of the moved dequantize get FoldAndAnnotateQParams' step,
// so the pass may run before or after it.
#include <set>

#include "passes/qparams_util.h"

namespace cortexm {

namespace {

bool is_target(const std::string& op) {
  return op == "aten.permute_copy.default" || op == "aten.view_copy.default" ||
         op == "aten.squeeze_copy.dims" || op == "aten.unsqueeze_copy.default";
}

int64_t prefix_product(const std::vector<int64_t>& shape, int64_t end) {
  int64_t p = 1;
  for (int64_t d = 0; d < end; ++d) p *= shape[static_cast<size_t>(d)];
  return p;
}

// The output dim that holds input dim `axis`, or -1.
int64_t moved_axis(const Node& node, const TensorInfo& in, const TensorInfo& out, int64_t axis) {
  if (node.op == "aten.permute_copy.default") {
    const std::vector<int64_t>& dims = OpArgs(node.op, node.name, node.attrs).ints("dims");
    for (size_t j = 0; j < dims.size(); ++j)
      if ((dims[j] + in.rank()) % in.rank() == axis) return static_cast<int64_t>(j);
    return -1;
  }
  // Reshapes keep the element order: dim j of the output is input dim `axis` when it has the same
  // extent and the same number of elements before it. Only a unique match counts.
  const int64_t before = prefix_product(in.shape, axis);
  int64_t found = -1;
  for (int64_t j = 0; j < out.rank(); ++j) {
    if (out.shape[j] != in.shape[axis] || prefix_product(out.shape, j) != before) continue;
    if (found >= 0) return -1;
    found = j;
  }
  return found;
}

// Moves the dequantize feeding `id` after it; returns the new dequantize or kNoNode.
NodeId move_dequantize(Graph& graph, NodeId id) {
  const Node& node = graph.node(id);
  const ValueId in = node.inputs[0], out = node.outputs[0];
  const NodeId p = graph.producer(in);
  if (p == kNoNode || !is_decomposed_dequantize(graph.node(p).op)) return kNoNode;
  if (graph.is_graph_output(out)) return kNoNode;
  const std::vector<NodeId> readers = graph.users(out);
  if (readers.empty()) return kNoNode;
  const Node& dq = graph.node(p);
  const std::string dq_op = dq.op;
  const ValueId quantized = dq.inputs[0];
  QuantParams q = node_qparams(graph, dq);
  const DType dtype = node_dtype(dq);
  if (q.per_channel()) {
    q.axis = moved_axis(node, graph.value(quantized).info, graph.value(out).info, q.axis);
    if (q.axis < 0) return kNoNode;
  } else {
    // DQ -> node -> Q with the same qparams: FoldAndAnnotateQParams folds the node whole.
    bool all_same = true;
    for (NodeId r : readers) {
      const Node& reader = graph.node(r);
      all_same = all_same && reader.op == kQuantize && node_qparams(graph, reader) == q &&
                 node_dtype(reader) == dtype;
    }
    if (all_same) return kNoNode;
  }
  graph.replace_input(id, 0, quantized);
  graph.reinfer(id);
  TensorInfo& info = graph.mutable_value(out).info;
  if (!info.qparams) info.qparams = q;
  const std::string source = graph.node(id).source;
  const ValueId moved =
      graph.call(dq_op, {out}, quant_attrs(q, dtype), node_after(graph, id), "", source)[0];
  redirect(graph, out, moved, readers, false);
  const ValueId old = graph.node(p).outputs[0];
  if (graph.users(old).empty() && !graph.is_graph_output(old)) graph.erase_node(p);
  return graph.producer(moved);
}

}  // namespace

bool propagate_qparams(Graph& graph, const TargetConfig&) {
  std::vector<NodeId> targets;  // mutated in place, never erased
  for (NodeId id : graph.order())
    if (is_target(graph.node(id).op)) targets.push_back(id);
  std::set<NodeId> moved;
  for (bool again = true; again;) {
    again = false;
    for (NodeId id : targets) {
      const NodeId dq = move_dequantize(graph, id);
      if (dq == kNoNode) continue;
      moved.insert(dq);
      again = true;
    }
  }
  for (NodeId dq : moved) {
    if (!is_live(graph, dq)) continue;  // moved on again
    for (NodeId reader : graph.users(graph.node(dq).outputs[0]))
      if (is_live(graph, reader)) fold_qparams_into(graph, reader);
  }
  return !moved.empty();
}

}  // namespace cortexm
