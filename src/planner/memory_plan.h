// The memory plan of a lowered graph: where every non-constant value and every node's scratch
// buffer lives in one arena. See docs/memory_planning.md.
//
// Steps are positions in graph.order() (the execution order; it must be topological). A value
// lives from the step that produces it (0 for graph inputs) to its last reader (the last step for
// graph outputs). A node's scratch buffer (int attr "scratch_bytes" > 0) lives only during its step.
// view_copy / squeeze_copy / unsqueeze_copy whose output keeps every element of its (non-constant)
// input at its byte offset (graph/layout.h same_bytes: both contiguous, or a non-contiguous order
// with only size-1 dims inserted or removed) alias the input: no buffer of their own; the root buffer's
// lifetime covers the alias's readers. Constants take no arena memory and have no slot.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace cortexm {

struct ValueSlot {
  int32_t value_id;
  int64_t offset;    // in the arena; an alias has its root's offset
  int64_t size;      // the value's bytes (shape x dtype size), not rounded up
  int32_t alias_of;  // the root value it shares bytes with (resolved through chains), or -1
  int32_t first;     // steps of this value's own lifetime (a root's covers its aliases' readers)
  int32_t last;
};

struct ScratchSlot {
  int32_t node_index;  // the step (position in graph.order()) of the node that owns it
  int64_t offset;
  int64_t size;
};

struct MemoryPlan {
  int64_t arena_size = 0;   // bytes, a multiple of the alignment
  int64_t lower_bound = 0;  // peak over steps of the aligned bytes live at that step
  int64_t alignment = 16;
  int32_t num_steps = 0;    // nodes in execution order
  std::vector<ValueSlot> values;    // non-constant live values, by value id
  std::vector<ScratchSlot> scratch; // by step
  std::string policy;       // the placement policy that won (see planner/placement.h)
};

// Plans the lowered graph's memory with the best placement policy (or the one named).
// Throws GraphError if the order is not topological or the alignment is not a power of two.
MemoryPlan plan_memory(const Graph& lowered, int64_t alignment = 16);
MemoryPlan plan_memory(const Graph& lowered, int64_t alignment, const std::string& policy);

// Whether `node` (of `graph`) makes its output an alias of its input (see above).
bool is_aliasing_view(const Graph& graph, const Node& node);

// "" if the plan is consistent, else the first problem: every buffer aligned and inside the
// arena, no two non-aliased buffers live at the same step overlapping, aliases at their root's
// offset and inside its lifetime, the lower bound equal to the plan's peak live bytes.
std::string check_plan(const MemoryPlan& plan);
void verify_plan(const MemoryPlan& plan);  // throws GraphError with check_plan's message

}  // namespace cortexm
