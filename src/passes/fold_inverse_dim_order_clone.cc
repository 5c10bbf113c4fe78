// FoldInverseDimOrderClone: a _clone_dim_order to the dim order its input already has is removed;
// so is a pair clone(a -> b) -> clone(b -> a) whose middle value nothing else reads.
#include "passes/pass.h"

namespace cortexm {

namespace {

constexpr const char* kClone = "dim_order_ops._clone_dim_order.default";

bool same_order(const TensorInfo& a, const TensorInfo& b) {
  return a.effective_dim_order() == b.effective_dim_order();
}

}  // namespace

bool fold_inverse_dim_order_clone(Graph& graph, const TargetConfig&) {
  bool changed = false;
  bool again = true;
  while (again) {
    again = false;
    for (NodeId id : graph.order()) {
      const Node& node = graph.node(id);
      if (node.op != kClone) continue;
      const ValueId in = node.inputs[0];
      const ValueId out = node.outputs[0];
      // Clone to the order the input already has.
      if (same_order(graph.value(in).info, graph.value(out).info) && !graph.is_graph_output(out)) {
        graph.replace_all_uses(out, in);
        graph.erase_node(id);
        again = changed = true;
        break;
      }
      // clone(x: a -> b) -> clone(b -> a): readers of the second read x.
      const NodeId producer = graph.producer(in);
      if (producer == kNoNode || graph.node(producer).op != kClone) continue;
      const ValueId origin = graph.node(producer).inputs[0];
      if (!same_order(graph.value(origin).info, graph.value(out).info) || graph.is_graph_output(out))
        continue;
      graph.replace_all_uses(out, origin);
      graph.erase_node(id);
      if (graph.users(in).empty() && !graph.is_graph_output(in)) graph.erase_node(producer);
      again = changed = true;
      break;
    }
  }
  return changed;
}

}  // namespace cortexm
