// Host side of the program file: a lowered graph and its arena layout -> program bytes
// (src/program/program.fbs), which src/runtime loads and runs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cortexm/kernels/conv_params.h"
#include "graph/graph.h"
#include "planner/memory_plan.h"

namespace cortexm::program {

// Where every arena value and op scratch lives: the writer's view of a memory plan
// (cortexm::planner::MemoryPlan converts to it one to one).
struct ArenaLayout {
  std::map<ValueId, int64_t> value_offsets;  // graph inputs and node outputs
  // Per node, by its index in graph.order(): (offset, size) of its scratch.
  std::map<int32_t, std::pair<int64_t, int64_t>> scratch;
  int64_t arena_size = 0;
};

struct BundledCase {
  std::vector<Tensor> inputs;            // logical, contiguous, as the graph takes them
  std::vector<Tensor> expected_outputs;  // what the program must produce
};

struct WriteOptions {
  std::string target = "cortex-m55+int8";
  std::vector<BundledCase> bundled;
};

// A node a program cannot hold: no kernel id for its op, or attributes its encode refuses.
struct ProgramProblem {
  std::string node, op, source, reason;
};

// Every such node of the graph, in order.
std::vector<ProgramProblem> program_problems(const Graph& graph);

// "node 'name' (op) in module 'source' cannot run in a cortexm program: reason".
std::string problem_line(const ProgramProblem& problem);

// Throws UnsupportedError listing every node program_problems finds.
void check_runnable(const Graph& graph);

// Scratch bytes the runtime's kernel for `node` needs on `isa` (0 when it takes none).
int64_t required_scratch(const Graph& graph, NodeId node, Isa isa);

// A layout without reuse: every value and scratch its own 16-byte aligned slot, views of
// contiguous bytes alias their input. Correct, not small: for tests and until a plan is given.
ArenaLayout sequential_layout(const Graph& graph, Isa isa);

// The memory planner's plan (plan_memory) as a layout. Nodes whose kernel needs more scratch than
// the plan gives them (graphs without "scratch_bytes" attributes) share one extra scratch region
// after the plan's arena; `extra_scratch` (optional) receives its size.
ArenaLayout planned_layout(const Graph& graph, Isa isa, int64_t* extra_scratch = nullptr,
                           const PlanOptions& options = PlanOptions());

// Serializes; throws GraphError when the layout misses a value or gives too little scratch, and
// UnsupportedError (check_runnable) for ops the runtime lacks.
std::string write_program(const Graph& graph, const ArenaLayout& layout, const WriteOptions& options);

}  // namespace cortexm::program
