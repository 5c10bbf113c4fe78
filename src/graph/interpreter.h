// The reference interpreter: runs a graph node by node through each op's registered kernel.
#pragma once

#include <functional>
#include <vector>

#include "graph/graph.h"

namespace cortexm {

// Called after each node with its outputs (for calibration observers and debugging).
using NodeObserver = std::function<void(const Node&, const std::vector<Tensor>&)>;

// Inputs must match the graph inputs' dtype and shape; throws GraphError naming the input otherwise.
std::vector<Tensor> run_graph(const Graph& graph, const std::vector<Tensor>& inputs,
                              const NodeObserver& observer = nullptr);

}  // namespace cortexm
