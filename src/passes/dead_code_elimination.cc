// DeadCodeElimination: nodes whose outputs nothing reads, and unread constants, go.
#include "passes/pass.h"

namespace cortexm {

bool dead_code_elimination(Graph& graph, const TargetConfig&) {
  const size_t constants = graph.constants().size();
  return graph.dead_code_elimination() > 0 || graph.constants().size() != constants;
}

}  // namespace cortexm
