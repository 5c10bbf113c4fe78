// SinkDimOrderClones: a _clone_dim_order from another dim order (channels-last, say) to contiguous
// moves past a consumer that works in any layout, so that it meets the clone back to that order
// after it (FoldInverseDimOrderClone then removes the pair), or disappears in a view whose output
// is contiguous anyway. The consumer then reads the clone's input and runs in its order:
// - cortex_m.quantized_activation and cortex_m.requantize (bytes in, bytes out, same layout);
// - constant_pad_nd (the runtime pads in any layout; its output keeps the input's order);
// - cortex_m.quantized_add / quantized_mul (and their int16 _s16 forms) with two inputs of one
//   rank, both such clones from the same order (same shapes run over the elements as one flat run;
//   broadcasting ones, a squeeze-and-excite scale [N, C, 1, 1] say, over the physical shapes);
// - views (OpSchema::is_view: view_copy / squeeze / unsqueeze) that only insert or remove size-1
//   dims (graph/layout.h).
// A dequantize is not passed: the copy would move to the four times larger float side. A clone
// moves only when one of the clones it replaces goes, so the number of clones never grows, and
// only when that gains something (it vanishes, two become one, or a reader folds it or takes it
// further): a clone that would just trade places with a view before a dequantize stays; a
// reader of the consumer that clones back to the consumer's new order goes at once (the pair that
// FoldInverseDimOrderClone would remove), so the consumers after it see their real readers.
#include <algorithm>

#include "graph/errors.h"
#include "graph/layout.h"
#include "ops/data_movement/data_movement_op_names.h"
#include "passes/pass.h"

namespace cortexm {

namespace {


// Indices of the inputs that follow the layout of the consumer's output; empty: not a consumer
// the pass moves clones past.
std::vector<size_t> layout_inputs(const Graph& graph, const Node& node) {
  const OpSchema* schema = OpRegistry::global().find(node.op);
  if (!schema) return {};
  std::vector<size_t> inputs;
  for (const int i : schema->layout_following_inputs) {
    const size_t input = static_cast<size_t>(i);
    if (input >= node.inputs.size() || node.inputs[input] == kNoValue) return {};
    if (graph.value(node.inputs[input]).info.rank() != graph.value(node.outputs[0]).info.rank() &&
        schema->layout_following_inputs.size() > 1)
      return {};
    inputs.push_back(input);
  }
  return inputs;
}

// The clone producing v when it turns a non-contiguous value contiguous, else kNoNode.
NodeId to_contiguous_clone(const Graph& graph, ValueId v) {
  const NodeId p = v == kNoValue ? kNoNode : graph.producer(v);
  if (p == kNoNode || graph.node(p).op != kClone) return kNoNode;
  const TensorInfo& in = graph.value(graph.node(p).inputs[0]).info;
  const TensorInfo& out = graph.value(v).info;
  return !in.contiguous() && out.contiguous() ? p : kNoNode;
}

bool only_read_by(const Graph& graph, ValueId v, NodeId reader) {
  if (graph.is_graph_output(v)) return false;
  const std::vector<NodeId> users = graph.users(v);
  return std::all_of(users.begin(), users.end(), [&](NodeId u) { return u == reader; });
}

// Whether moving one clone per input past the consumer of `out` gains something: the clone
// vanishes (`out` comes out contiguous), fewer clones remain (two inputs' clones become one), or a
// reader of `out` folds with the moved clone (a clone back to `order`) or lets it move on.
bool worth_moving(const Graph& graph, ValueId out, const std::vector<int64_t>& order, int going) {
  if (order == contiguous_dim_order(order.size()) || going > 1) return true;
  for (NodeId r : graph.users(out)) {
    const Node& reader = graph.node(r);
    if (reader.op == kClone && graph.value(reader.outputs[0]).info.effective_dim_order() == order)
      return true;
    if (!layout_inputs(graph, reader).empty()) return true;
  }
  return false;
}

bool sink_past(Graph& graph, NodeId id) {
  const Node& node = graph.node(id);
  const std::vector<size_t> inputs = layout_inputs(graph, node);
  if (inputs.empty()) return false;
  const ValueId out = node.outputs[0];
  if (graph.is_graph_output(out)) return false;
  std::vector<NodeId> clones;
  int going = 0;
  for (size_t i : inputs) {
    const NodeId c = to_contiguous_clone(graph, node.inputs[i]);
    if (c == kNoNode) return false;
    if (std::find(clones.begin(), clones.end(), c) == clones.end() && only_read_by(graph, node.inputs[i], id))
      ++going;
    clones.push_back(c);
  }
  const TensorInfo& source = graph.value(graph.node(clones[0]).inputs[0]).info;
  for (NodeId c : clones)
    if (graph.value(graph.node(c).inputs[0]).info.effective_dim_order() != source.effective_dim_order())
      return false;
  if (going == 0) return false;
  // The order the consumer's output takes.
  std::vector<int64_t> order = source.effective_dim_order();
  if (OpRegistry::global().get(node.op).is_view) {
    const auto kept = view_dim_order(source, graph.value(out).info.shape);
    if (!kept) return false;
    order = *kept;
  }
  if (!worth_moving(graph, out, order, going)) return false;
  std::vector<NodeId> readers = graph.users(out);
  readers.erase(std::unique(readers.begin(), readers.end()), readers.end());  // users are in order
  for (size_t k = 0; k < inputs.size(); ++k)
    graph.replace_input(id, inputs[k], graph.node(clones[k]).inputs[0]);
  graph.reinfer(id);
  if (graph.value(out).info.effective_dim_order() != order)
    throw GraphError("node '" + node.name + "' (" + node.op + "): SinkDimOrderClones expected " +
                     "its output in dim order " + shape_to_string(order) + ", inference gives " +
                     shape_to_string(graph.value(out).info.effective_dim_order()));
  for (size_t k = 0; k < clones.size(); ++k) {
    const bool seen = std::find(clones.begin(), clones.begin() + k, clones[k]) != clones.begin() + k;
    if (!seen && graph.users(graph.node(clones[k]).outputs[0]).empty()) graph.erase_node(clones[k]);
  }
  if (graph.value(out).info.contiguous()) return true;
  // Back to contiguous after the consumer, for its readers.
  const auto& order_now = graph.order();
  const auto next = std::find(order_now.begin(), order_now.end(), id) + 1;
  const NodeId before = next == order_now.end() ? kNoNode : *next;
  const ValueId back = graph.call(kClone, {out},
                                  {{"dim_order", contiguous_dim_order(graph.value(out).info.shape.size())}},
                                  before)[0];
  graph.mutable_node(graph.producer(back)).meta["lowering"] = "cortex_m";
  for (NodeId r : readers) {
    const Node& reader = graph.node(r);
    // A clone back to the order the consumer now has meets its inverse here: it goes at once,
    // so later consumers see the readers that remain.
    if (reader.op == kClone && !graph.is_graph_output(reader.outputs[0]) &&
        graph.value(reader.outputs[0]).info.effective_dim_order() == order) {
      graph.replace_all_uses(reader.outputs[0], out);
      graph.erase_node(r);
      continue;
    }
    for (size_t i = 0; i < reader.inputs.size(); ++i)
      if (reader.inputs[i] == out) graph.replace_input(r, i, back);
  }
  if (graph.users(back).empty()) graph.erase_node(graph.producer(back));
  return true;
}

}  // namespace

bool sink_dim_order_clones(Graph& graph, const TargetConfig&) {
  return rewrite_nodes(graph, [&](NodeId id) {
    const bool live = std::find(graph.order().begin(), graph.order().end(), id) != graph.order().end();
    return live && sink_past(graph, id);
  });
}

}  // namespace cortexm
