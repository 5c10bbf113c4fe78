// RemoveNoopViewCopy: a view_copy whose input already has the target shape changes nothing.
#include "passes/pass.h"

namespace cortexm {

bool remove_noop_view_copy(Graph& graph, const TargetConfig&) {
  return rewrite_nodes(graph, [&](NodeId id) {
    const Node& node = graph.node(id);
    if (node.op != "aten.view_copy.default") return false;
    const Value& in = graph.value(node.inputs[0]);
    const Value& out = graph.value(node.outputs[0]);
    if (in.info.shape != out.info.shape || in.info != out.info) return false;
    graph.replace_all_uses(out.id, in.id);
    graph.erase_node(id);
    return true;
  });
}

}  // namespace cortexm
