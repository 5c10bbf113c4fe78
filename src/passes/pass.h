// Graph passes of the lowering. Each pass lives in its own file (in src/passes/, or in its op
// family's folder when it rewrites that family's ops, like ops/conv/fold_pad_into_conv.cc or the layout passes in ops/data_movement/) and is
// listed in passes.def, in the order the default pipeline runs them; the Python
// CortexMPassManager runs them by name.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"
#include "target/target_config.h"

namespace cortexm {

// Returns whether the pass changed the graph.
using PassFn = bool (*)(Graph& graph, const TargetConfig& target);

struct PassInfo {
  const char* name;
  PassFn run;
  const char* summary;
};

const std::vector<PassInfo>& registered_passes();
const PassInfo& find_pass(const std::string& name);  // throws GraphError listing the known names
// The default pipeline: pass names in the order passes.def runs them (a pass may run twice).
const std::vector<std::string>& default_pass_order();

// Offers `rewrite` every node of the graph's order as it stood when the pass began (nodes a rewrite
// adds are not offered); `rewrite(id)` returns whether it changed the graph, and may erase its node.
// Returns whether any rewrite did.
template <typename Rewrite>
bool rewrite_nodes(Graph& graph, Rewrite rewrite) {
  bool changed = false;
  const std::vector<NodeId> order = graph.order();
  for (NodeId id : order) changed = rewrite(id) || changed;
  return changed;
}

#define CORTEXM_PASS(name, fn, summary) bool fn(Graph& graph, const TargetConfig& target);
#include "passes/passes.def"
#undef CORTEXM_PASS

}  // namespace cortexm
