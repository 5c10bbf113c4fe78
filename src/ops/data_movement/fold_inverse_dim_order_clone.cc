// FoldInverseDimOrderClone: a _clone_dim_order to the dim order its input already has is removed;
// so is a pair clone(x: a -> b) -> clone(b -> a) whose middle value nothing else reads. The pair
// may have views between them (OpSchema::is_view: view_copy / squeeze / unsqueeze, each read
// once) when the views, applied to x itself, keep its bytes in place and end in the second clone's
// order (a size-1 dim inserted or removed between the layout changes, graph/layout.h).
#include "graph/layout.h"
#include "ops/data_movement/data_movement_op_names.h"
#include "passes/pass.h"

namespace cortexm {

namespace {


bool same_order(const TensorInfo& a, const TensorInfo& b) {
  return a.effective_dim_order() == b.effective_dim_order();
}

bool read_once(const Graph& graph, ValueId v) {
  return graph.users(v).size() == 1 && !graph.is_graph_output(v);
}

// clone `id` to the order its input has: readers read the input.
bool drop_noop_clone(Graph& graph, NodeId id) {
  const Node& node = graph.node(id);
  const ValueId in = node.inputs[0], out = node.outputs[0];
  if (!same_order(graph.value(in).info, graph.value(out).info) || graph.is_graph_output(out))
    return false;
  graph.replace_all_uses(out, in);
  graph.erase_node(id);
  return true;
}

// clone(x: a -> b) -> views -> clone `second` (-> c): the first view (or `second`'s readers) reads
// x, and the views take x's order through them, which must end in c.
bool fold_pair(Graph& graph, NodeId second) {
  const ValueId out = graph.node(second).outputs[0];
  if (graph.is_graph_output(out)) return false;
  std::vector<NodeId> views;  // last first
  ValueId v = graph.node(second).inputs[0];
  NodeId p = graph.producer(v);
  while (p != kNoNode && OpRegistry::global().get(graph.node(p).op).is_view) {
    if (!read_once(graph, v)) return false;
    views.push_back(p);
    v = graph.node(p).inputs[0];
    p = graph.producer(v);
  }
  if (p == kNoNode || graph.node(p).op != kClone) return false;
  const NodeId first = p;
  const ValueId origin = graph.node(first).inputs[0];
  TensorInfo info = graph.value(origin).info;
  for (auto it = views.rbegin(); it != views.rend(); ++it) {
    const TensorInfo& view_out = graph.value(graph.node(*it).outputs[0]).info;
    const auto order = view_dim_order(info, view_out.shape);
    if (!order) return false;
    info = view_out;
    info.dim_order = *order;
  }
  if (!same_order(info, graph.value(out).info)) return false;
  ValueId result = origin;
  if (!views.empty()) {
    graph.replace_input(views.back(), 0, origin);
    for (auto it = views.rbegin(); it != views.rend(); ++it) graph.reinfer(*it);
    result = graph.node(views.front()).outputs[0];
  }
  graph.replace_all_uses(out, result);
  graph.erase_node(second);
  if (graph.users(v).empty() && !graph.is_graph_output(v)) graph.erase_node(first);
  return true;
}

}  // namespace

bool fold_inverse_dim_order_clone(Graph& graph, const TargetConfig&) {
  bool changed = false;
  bool again = true;
  while (again) {
    again = false;
    for (NodeId id : graph.order()) {
      if (graph.node(id).op != kClone) continue;
      if (drop_noop_clone(graph, id) || fold_pair(graph, id)) {
        again = changed = true;
        break;
      }
    }
  }
  return changed;
}

}  // namespace cortexm
