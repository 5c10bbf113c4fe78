// execute: runs the ops of a loaded program in order on the caller's arena.
#include <cstring>

#include "program/program_generated.h"
#include "runtime/op_context.h"

namespace cortexm::runtime {

Status execute(const Program& program, uint8_t* arena, size_t arena_bytes, const Profiler* profiler,
               RunStats* stats, const HostKernels* host) {
  if (program.required_arena_size() > 0 && !arena)
    return program_error("arena", -1, "arena", 0, "must not be null", -1, StatusCode::kInvalidArgument);
  if (reinterpret_cast<uintptr_t>(arena) % kAlignment != 0)
    return program_error("arena", -1, "arena", static_cast<int64_t>(reinterpret_cast<uintptr_t>(arena) % kAlignment),
                         "must be 16-byte aligned", -1, StatusCode::kInvalidArgument);
  if (arena_bytes < program.required_arena_size())
    return program_error("arena", -1, "arena_bytes", static_cast<int64_t>(arena_bytes),
                         "must be at least the program's required_arena_size (its arena_size, plus the scratch "
                         "this runtime's kernels need beyond the program's plan)",
                         -1, StatusCode::kInvalidArgument);
#if defined(__x86_64__)
  // The variant is read once: set_host_variant from another thread takes effect at the next run.
  const HostKernels in_use{host_variant(), nullptr};
  if (!host) host = &in_use;
#endif
  RunStats local;
  const auto* ops = program.fb().ops();
  // With init_op_state's state: each op's OpImpl from its slot and its decoded state after the
  // slots; without: the resolver's OpImpl and the op's state decoded here, for this run only.
  const uint8_t* const state = program.op_state();
  size_t state_offset = size_t{kOpSlotBytes} * static_cast<size_t>(program.num_ops());
  alignas(8) unsigned char decoded[kMaxOpStateBytes];
  for (int32_t i = 0; i < program.num_ops(); ++i) {
    const fb::Op& op = *ops->Get(i);
    const OpImpl* impl_address = nullptr;
    if (state) std::memcpy(&impl_address, state + size_t{kOpSlotBytes} * static_cast<size_t>(i), sizeof impl_address);
    const OpImpl& impl = state ? *impl_address : program.op_impl(i);
    if (profiler && profiler->hook) profiler->hook(profiler->context, i, op.kernel(), false);
    OpContext ctx{program, op, i, arena};
    ctx.host = host;
    if (impl.state) {
      if (state) {
        ctx.state = state + state_offset;
        state_offset += impl.state->bytes;
      } else {
        impl.state->init(ctx, decoded);
        ctx.state = decoded;
      }
    }
    impl.run(ctx);
    if (profiler && profiler->hook) profiler->hook(profiler->context, i, op.kernel(), true);
    ++local.ops;
    if (impl.float_fallback) ++local.float_ops;
  }
  if (stats) *stats = local;
  return kStatusOk;
}

}  // namespace cortexm::runtime
