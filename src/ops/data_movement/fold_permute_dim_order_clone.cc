// FoldPermuteDimOrderClone: a permute_copy writes (or reads) any dim order, so a _clone_dim_order
// next to it is one copy too many. permute(x) -> clone(order d), the permute read only by the
// clone: the permute writes order d itself. clone(x) -> permute, the clone read only by the
// permute: the permute reads x. An imported NHWC tensor permuted to NCHW for a channels-last
// kernel then has the bytes it started with, and the planner aliases the permute
// (permute_keeps_bytes): no copy at a TFLite model's NHWC input or before its NHWC reshape.
#include "passes/pass.h"
#include "ops/data_movement/data_movement_op_names.h"

namespace cortexm {

namespace {

constexpr const char* kPermute = "aten.permute_copy.default";

bool read_once(const Graph& graph, ValueId v) {
  return graph.users(v).size() == 1 && !graph.is_graph_output(v);
}

// clone `id` of a permute read only by it: the permute's output takes the clone's order.
bool fold_into_permute(Graph& graph, NodeId id) {
  const Node& clone = graph.node(id);
  const ValueId mid = clone.inputs[0], out = clone.outputs[0];
  const NodeId p = graph.producer(mid);
  if (p == kNoNode || graph.node(p).op != kPermute || !read_once(graph, mid) || graph.is_graph_output(out))
    return false;
  graph.mutable_value(mid).info.dim_order = graph.value(out).info.dim_order;
  graph.replace_all_uses(out, mid);
  graph.erase_node(id);
  return true;
}

// permute `id` of a clone read only by it: the permute reads the clone's input.
bool permute_reads_clone_input(Graph& graph, NodeId id) {
  const ValueId mid = graph.node(id).inputs[0];
  const NodeId c = graph.producer(mid);
  if (c == kNoNode || graph.node(c).op != kClone || !read_once(graph, mid)) return false;
  graph.replace_input(id, 0, graph.node(c).inputs[0]);
  graph.erase_node(c);
  return true;
}

}  // namespace

bool fold_permute_dim_order_clone(Graph& graph, const TargetConfig&) {
  bool changed = false;
  bool again = true;
  while (again) {
    again = false;
    for (NodeId id : graph.order()) {
      const std::string& op = graph.node(id).op;
      if ((op == kClone && fold_into_permute(graph, id)) || (op == kPermute && permute_reads_clone_input(graph, id))) {
        again = changed = true;
        break;
      }
    }
  }
  return changed;
}

}  // namespace cortexm
