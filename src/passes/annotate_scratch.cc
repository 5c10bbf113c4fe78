// AnnotateScratch: every node whose kernel needs scratch records it as its scratch_bytes
// attribute: OpSchema::planned_scratch for the target's isa (what the memory planner reserves).
#include <algorithm>
#include <limits>

#include "graph/errors.h"
#include "passes/pass.h"

namespace cortexm {

bool annotate_scratch(Graph& graph, const TargetConfig& target) {
  bool changed = false;
  for (NodeId id : graph.order()) {
    const Node& node = graph.node(id);
    const OpSchema* schema = OpRegistry::global().find(node.op);
    if (!schema || !schema->scratch || !schema->has_attr("scratch_bytes")) continue;
    const size_t bytes = schema->planned_scratch(node_context(graph, id), target.isa);
    if (bytes > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
      throw UnsupportedError("node '" + node.name + "' (" + node.op + "): its kernel needs " +
                             std::to_string(bytes) + " bytes of scratch (over 2^31)");
    const auto it = std::find_if(node.attrs.begin(), node.attrs.end(),
                                 [](const auto& a) { return a.first == "scratch_bytes"; });
    if (it != node.attrs.end() && it->second == AttrValue(static_cast<int64_t>(bytes))) continue;
    graph.set_attr(id, "scratch_bytes", static_cast<int64_t>(bytes));
    changed = true;
  }
  return changed;
}

}  // namespace cortexm
