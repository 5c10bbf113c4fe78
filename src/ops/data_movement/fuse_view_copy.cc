// FuseViewCopy: view_copy -> view_copy reads the first view's input directly (one view to the
// final shape), and view_copy -> (unary elementwise op or contiguous _clone_dim_order) -> view_copy
// runs the middle node on the final shape (the first view takes it; the last becomes a no-op that
// RemoveNoopViewCopy drops). Only contiguous values in single-reader chains are reshaped.

#include "passes/pass.h"

namespace cortexm {

namespace {

constexpr const char* kView = "aten.view_copy.default";
constexpr const char* kClone = "dim_order_ops._clone_dim_order.default";

bool is_unary_elementwise(const std::string& op) {
  const OpSchema* schema = OpRegistry::global().find(op);
  return schema && schema->is_unary_elementwise;
}

bool read_once(const Graph& graph, ValueId v) {
  return graph.users(v).size() == 1 && !graph.is_graph_output(v);
}

// A contiguous clone: one that changes no layout.
bool is_contiguous_clone(const Node& node) {
  if (node.op != kClone) return false;
  const OpArgs args(node.op, node.name, node.attrs);
  if (args.is_none("dim_order")) return true;
  const std::vector<int64_t>& order = args.ints("dim_order");
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] != static_cast<int64_t>(i)) return false;
  return true;
}

// view(a) -> view(b): the second reads the first's input.
bool collapse_views(Graph& graph, NodeId second) {
  const ValueId mid = graph.node(second).inputs[0];
  const NodeId first = graph.producer(mid);
  if (first == kNoNode || graph.node(first).op != kView) return false;
  graph.replace_input(second, 0, graph.node(first).inputs[0]);
  graph.reinfer(second);
  if (graph.users(mid).empty() && !graph.is_graph_output(mid)) graph.erase_node(first);
  return true;
}

// view(a -> b) -> middle -> view(b -> c): the first view goes to c, the middle runs on c.
bool move_view_through(Graph& graph, NodeId last) {
  const ValueId mid_out = graph.node(last).inputs[0];
  const NodeId middle = graph.producer(mid_out);
  if (middle == kNoNode) return false;
  const Node& m = graph.node(middle);
  if (!is_unary_elementwise(m.op) && !is_contiguous_clone(m)) return false;
  const ValueId mid_in = m.inputs[0];
  const NodeId first = graph.producer(mid_in);
  if (first == kNoNode || graph.node(first).op != kView) return false;
  const std::vector<int64_t> target = graph.value(graph.node(last).outputs[0]).info.shape;
  if (graph.value(mid_in).info.shape == target) return false;  // done already
  if (!read_once(graph, mid_in) || !read_once(graph, mid_out) ||
      !graph.value(mid_in).info.contiguous() || !graph.value(mid_out).info.contiguous())
    return false;
  graph.set_attr(first, "size", target);
  graph.reinfer(first);
  graph.mutable_value(mid_in).info.dim_order.clear();
  if (m.op == kClone) graph.set_attr(middle, "dim_order", NoneAttr{});
  graph.reinfer(middle);
  graph.mutable_value(mid_out).info.dim_order.clear();
  graph.reinfer(last);
  return true;
}

}  // namespace

bool fuse_view_copy(Graph& graph, const TargetConfig&) {
  bool changed = false;
  bool again = true;
  while (again) {
    again = false;
    const std::vector<NodeId> order = graph.order();
    for (NodeId id : order) {
      if (graph.node(id).op != kView) continue;
      if (collapse_views(graph, id) || move_view_through(graph, id)) {
        again = changed = true;
        break;
      }
    }
  }
  return changed;
}

}  // namespace cortexm
