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
// In place (PlanOptions::in_place): an op whose schema names an in_place_input (in_place_input())
// writes its output over that input's buffer when the planner proves it legal: the input and
// every value sharing its bytes die at the op, none is a graph output (nor a graph input with
// PlanOptions::preserve_inputs: else a run consumes its inputs), no other input of the op shares
// them, and input and output have the same shape, dim order and bytes; or, for an op with
// in_place_narrowing (quantize: its kernel streams forward), the same shape and dim order, an
// output element no larger, the output at the first byte of the input's whole buffer; or, for an
// op with an in_place_lag (depthwise conv, conv of one group) that gives these params a lag (>= 0), both are channels-last 4-D of one dtype and the output
// starts the lag (rounded up to the alignment, at least one alignment) below the input, taken only where it makes the
// arena smaller (or keeps it and holds fewer byte-steps). A value then lies at an offset inside
// its root's buffer, which is placed by its parts (planner/placement.h Lifetime::parts).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace cortexm {

struct ValueSlot {
  int32_t value_id;
  int64_t offset;    // in the arena; a view has its input's, a depthwise in place its lag below its input
  int64_t size;      // the value's bytes (shape x dtype size), not rounded up
  int32_t alias_of;  // the root value it shares bytes with (resolved through chains), or -1
  int32_t first;     // steps of this value's own lifetime (a root's covers its aliases' readers)
  int32_t last;
  bool in_place = false;  // written over alias_of's bytes by its producer, whose input died there
};

struct ScratchSlot {
  int32_t node_index;  // the step (position in graph.order()) of the node that owns it
  int64_t offset;
  int64_t size;
};

struct MemoryPlan {
  int64_t arena_size = 0;   // bytes, a multiple of the alignment
  // Peak over steps of the aligned bytes live at that step, in the plan's model of execution:
  // with in_place, ops proved in place share their input's buffer; without, every op holds its
  // whole inputs and its whole output (the tensor-level bound).
  int64_t lower_bound = 0;
  int64_t tensor_level_bound = 0;  // the same peak with no op in place
  bool in_place = false;           // whether ops were allowed to run in place
  int64_t alignment = 16;
  int32_t num_steps = 0;    // nodes in execution order
  std::vector<ValueSlot> values;    // non-constant live values, by value id
  std::vector<ScratchSlot> scratch; // by step
  std::string policy;       // the placement policy that won (see planner/placement.h)
};

struct PlanOptions {
  int64_t alignment = 16;
  std::optional<std::string> policy;  // unset: every placement policy, keeping the smallest arena
  bool in_place = true;  // let proved ops write over their dying input
  // Keep graph inputs intact through a run (they live to the last step). Unset, an input's buffer
  // is reused once it is dead, by later values or an op in place over it (a run consumes its
  // inputs, as in TFLite Micro's arena): set them before every run.
  bool preserve_inputs = false;
};

// Plans the lowered graph's memory with the best placement policy (or the one named).
// Throws GraphError if the order is not topological or the alignment is not a power of two.
MemoryPlan plan_memory(const Graph& lowered, const PlanOptions& options);
MemoryPlan plan_memory(const Graph& lowered, int64_t alignment = 16);
MemoryPlan plan_memory(const Graph& lowered, int64_t alignment, const std::string& policy);

// The input of `op` its output may overwrite when that input dies at the op (its kernel reads
// element i before writing element i and reads no other element of that input), or -1.
int in_place_input(const std::string& op);

// Whether `node` (of `graph`) makes its output an alias of its input: a view (view_copy,
// squeeze_copy, unsqueeze_copy) or a _clone_dim_order whose output keeps every element of its
// non-constant input at the same byte offset (same_bytes); the program writes it as a View.
bool is_aliasing_view(const Graph& graph, const Node& node);

// "" if the plan is consistent, else the first problem: every value aligned and inside the arena,
// no two root buffers (a root and its aliases, placed by the parts their own lifetimes give) live
// at the same step overlapping, views at their root's offset or an in-place value's and inside the
// root's lifetime, nothing made before an in-place value read after it, the lower bound equal to
// the plan's peak live bytes.
std::string check_plan(const MemoryPlan& plan);
void verify_plan(const MemoryPlan& plan);  // throws GraphError with check_plan's message

}  // namespace cortexm
