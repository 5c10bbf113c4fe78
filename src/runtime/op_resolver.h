// Which kernels a runtime can run: an OpResolver lists (kernel id, implementation) pairs, like
// TFLite Micro's MicroMutableOpResolver. Program::load takes one; a kernel it does not list is
// refused at load time (StatusCode::kUnsupported). Only the implementations a resolver names are
// linked (each is its own object, -ffunction-sections -fdata-sections and --gc-sections drop the
// rest), with their params table verifiers and load-time checks, so firmware that registers the
// kernels of its programs (Program.export_c writes <name>_ops.cc) carries no other kernel nor
// its checks. all_ops() registers every kernel in ops/ops.def.
#pragma once

#include <cstdint>

#include "program/program_generated.h"

namespace cortexm::runtime {

struct OpImpl;

struct OpEntry {
  uint8_t kernel_id;
  const OpImpl* impl;
};

class OpResolver {
 public:
  constexpr OpResolver(const OpEntry* entries, int32_t count) : entries_(entries), count_(count) {}

  // nullptr when kernel_id is not registered.
  const OpImpl* find(uint8_t kernel_id) const {
    // Tables listed in id order (all_ops) answer at once; short lists are searched.
    if (kernel_id < count_ && entries_[kernel_id].kernel_id == kernel_id) return entries_[kernel_id].impl;
    for (int32_t i = 0; i < count_; ++i)
      if (entries_[i].kernel_id == kernel_id) return entries_[i].impl;
    return nullptr;
  }

  int32_t size() const { return count_; }
  const OpEntry& entry(int32_t i) const { return entries_[i]; }

 private:
  const OpEntry* entries_;
  int32_t count_;
};

// Every kernel's implementation, one object per KernelId: op::QuantizedConv2d, ...
namespace op {
#define RUNTIME_OP(id, params, min_in, max_in, min_out, max_out, is_float, stem) extern const OpImpl id;
#define RUNTIME_BINARY(id, params, type, stem) extern const OpImpl id;
#include "runtime/ops/ops.def"
#undef RUNTIME_BINARY
#undef RUNTIME_OP
}  // namespace op

// An OpEntry for a KernelId name: CORTEXM_OP(QuantizedConv2d).
#define CORTEXM_OP(id) \
  ::cortexm::runtime::OpEntry { static_cast<uint8_t>(::cortexm::fb::KernelId_##id), &::cortexm::runtime::op::id }

// Every kernel of this runtime (what Program::load without a resolver uses).
const OpResolver& all_ops();

}  // namespace cortexm::runtime
