// Offline placement of buffers with known lifetimes in one arena, independent of the graph.
//
// A buffer occupies its size rounded up to the alignment from its offset, during steps
// first..last (inclusive), or only its parts when it has them. Two buffers must not overlap in
// memory where they are live at the same step. The lower bound on any arena is the peak, over
// steps, of the aligned bytes live at that step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cortexm {

// A piece of a buffer: `size` bytes from `offset` bytes into it, live during steps first..last.
struct Part {
  int64_t offset;
  int64_t size;
  int32_t first;
  int32_t last;
};

struct Lifetime {
  int64_t size;   // bytes; 0 is allowed (takes no memory)
  int32_t first;  // first step it is live
  int32_t last;   // last step it is live (inclusive, >= first)
  // Empty: all `size` bytes are live from first to last. Else the bytes it holds step by step, for
  // a buffer whose contents move inside it (an output written over its input from a lag below
  // it): aligned offsets, inside size and first..last, disjoint at any one step.
  std::vector<Part> parts = {};
};

struct Placement {
  std::vector<int64_t> offsets;  // one per lifetime, multiples of the alignment
  int64_t arena_size = 0;        // max over buffers of offset + aligned size
  int64_t lower_bound = 0;       // peak aligned live bytes at any step
  std::string policy;            // the policy that produced the offsets
};

// The placement policies: an order in which buffers are placed, and a choice of gap.
// Each buffer goes in a gap between already-placed buffers whose lifetimes overlap its own;
// "first fit" takes the lowest gap that fits, "best fit" the smallest gap that fits (else the
// lowest offset above all of them).
//  - "size_first_fit":     largest first, first fit (TensorFlow Lite Micro's GreedyMemoryPlanner)
//  - "size_best_fit":      largest first, best fit (TFLite GPU's greedy-by-size offsets)
//  - "area_first_fit":     largest size * duration first, first fit
//  - "duration_first_fit": longest lifetime first (then largest), first fit
//  - "breadth_best_fit":   steps by decreasing live bytes; at each, its unplaced buffers largest
//                          first, best fit (TFLite GPU's greedy-by-breadth)
// Ties are broken by the buffer's index, so results are deterministic.
const std::vector<std::string>& placement_policies();

// Places the buffers with one policy. Throws GraphError for a bad lifetime, alignment or policy.
Placement place_buffers_with(const std::vector<Lifetime>& buffers, int64_t alignment,
                             const std::string& policy);

// Places the buffers with every policy and keeps the smallest arena (the earliest policy in
// placement_policies() on ties, so "size_first_fit" unless another one is strictly better).
Placement place_buffers(const std::vector<Lifetime>& buffers, int64_t alignment);

// Peak aligned live bytes over steps.
int64_t peak_live_bytes(const std::vector<Lifetime>& buffers, int64_t alignment);

// size rounded up to a multiple of alignment.
int64_t align_up(int64_t size, int64_t alignment);

// Checks a placement: one aligned offset per buffer, each inside the arena, no two live at the
// same step overlapping, the lower bound right. Returns "" if valid, else the first problem,
// naming buffers by `labels` when given (else "buffer <index>").
std::string check_placement(const std::vector<Lifetime>& buffers, int64_t alignment,
                            const Placement& placement,
                            const std::vector<std::string>& labels = {});

}  // namespace cortexm
