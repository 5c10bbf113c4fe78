// What a runtime op implementation sees: its op table, tensors as views, scratch. Each kernel id
// has one file in runtime/ops with a prepare (load-time validation, arena == nullptr) and a run.
#pragma once

#include <new>
#include <type_traits>

#include "program/program_generated.h"
#include "runtime/op_resolver.h"
#include "runtime/program.h"

namespace cortexm::runtime {

// Where an operand's bytes are during a run: an offset into the run's arena or into the program's
// constants (fixed-width, so an op's decoded state has one size on every platform).
struct DataRef {
  enum Base : uint8_t { kNone = 0, kArena, kConstant };
  uint32_t offset = 0;
  Base base = kNone;  // kNone: an absent optional operand (nullptr)
};

struct OpContext {
  const Program& program;
  const fb::Op& op;
  int32_t index;   // op index, for errors
  uint8_t* arena;  // nullptr while preparing
  // While preparing: the largest scratch an op needs beyond its planned one (require_scratch).
  size_t* extra_scratch = nullptr;
  // While running on the host: the run's x86 kernels, or null.
  const HostKernels* host = nullptr;
  // While running an op whose kernel keeps state (OpImpl::state): what its init decoded.
  const void* state = nullptr;

  int32_t num_inputs() const { return static_cast<int32_t>(op.inputs()->size()); }
  int32_t num_outputs() const { return static_cast<int32_t>(op.outputs()->size()); }
  bool has_input(int32_t i) const { return i < num_inputs() && op.inputs()->Get(i) >= 0; }
  TensorView input(int32_t i) const { return program.tensor(op.inputs()->Get(i), arena); }
  TensorView output(int32_t i = 0) const { return program.tensor(op.outputs()->Get(i), arena); }
  // The op's scratch of `bytes` (what require_scratch was given): its planned region, or the one
  // after the program's arena when the plan is smaller (Program::required_arena_size).
  uint8_t* scratch(size_t bytes) const {
    if (!arena) return nullptr;
    return arena + (op.scratch_size() >= bytes ? op.scratch_offset() : program.extra_scratch_offset());
  }

  DataRef input_ref(int32_t i) const { return has_input(i) ? program.data_ref(op.inputs()->Get(i)) : DataRef{}; }
  DataRef output_ref(int32_t i = 0) const { return program.data_ref(op.outputs()->Get(i)); }
  // Where scratch(bytes) is.
  DataRef scratch_ref(size_t bytes) const {
    const uint64_t at = op.scratch_size() >= bytes ? op.scratch_offset() : program.extra_scratch_offset();
    return DataRef{static_cast<uint32_t>(at), DataRef::kArena};
  }
  // The bytes of `ref` in this run.
  uint8_t* data(const DataRef& ref) const {
    if (ref.base == DataRef::kArena) return arena + ref.offset;
    if (ref.base == DataRef::kConstant) return const_cast<uint8_t*>(program.constant_data()) + ref.offset;
    return nullptr;
  }
  template <class T>
  T* data_as(const DataRef& ref) const { return reinterpret_cast<T*>(data(ref)); }

  Status fail(const char* field, int64_t value, const char* requirement,
              int64_t element = -1) const {
    return program_error("ops", index, field, value, requirement, element);
  }
  Status fail(const Error& error) const {
    return Status{StatusCode::kInvalidProgram, "ops", index, error};
  }
  Status unsupported(const char* field, int64_t value, const char* requirement) const {
    return program_error("ops", index, field, value, requirement, -1, StatusCode::kUnsupported);
  }
};

template <class P, class = void>
struct HasHostPacked : std::false_type {};
template <class P>
struct HasHostPacked<P, std::void_t<decltype(P::host_packed)>> : std::true_type {};

// Gives kernel params P the run's x86 variant and the op's weights packed for it, when P takes them
// (no code off x86-64: Cortex-M runs have no HostKernels).
template <class P>
void take_host_kernels([[maybe_unused]] const OpContext& ctx, [[maybe_unused]] P* p) {
#if defined(__x86_64__)
  if (!ctx.host) return;
  if constexpr (TakesHostVariant<P>::value) p->host_variant = ctx.host->variant;
  if constexpr (HasHostPacked<P>::value) p->host_packed = ctx.host->packed ? ctx.host->packed[ctx.index] : nullptr;
#endif
}

// Kernel params P for this run: `decoded` itself, or on the host a copy with the run's x86 kernels.
template <class P>
const P& with_host_kernels([[maybe_unused]] const OpContext& ctx, const P& decoded, [[maybe_unused]] P* copy) {
#if defined(__x86_64__)
  if (ctx.host) {
    *copy = decoded;
    take_host_kernels(ctx, copy);
    return *copy;
  }
#endif
  return decoded;
}

using PrepareFn = Status (*)(const OpContext&);
using RunFn = void (*)(const OpContext&);
// The FlatBuffers verifier of one params table (verify_params<Table>), given a non-null table: the
// loader verifies an op's params with it, so a firmware links the table verifiers of its
// registered kernels only (the OpParams union's verifier would take every table).
using VerifyParamsFn = bool (*)(flatbuffers::Verifier& verifier, const void* params);

template <class Table>
bool verify_params(flatbuffers::Verifier& verifier, const void* params) {
  return static_cast<const Table*>(params)->Verify(verifier);
}

// The bytes an op's output must start below its input 0 to be written over it (OpSchema's
// in_place_lag), or -1 when the kernel cannot run its params in place; the op passed its prepare.
using InPlaceLagFn = int64_t (*)(const OpContext&);
int64_t in_place_lag_quantized_conv2d(const OpContext& ctx);
int64_t in_place_lag_quantized_depthwise_conv2d(const OpContext& ctx);

// An op's state: what its run needs decoded once from the program (its kernel params, where its
// operands are), written by `init` after the op passed its prepare (Program::init_op_state), into
// `bytes` bytes, 8-byte aligned. `bytes` is fixed per kernel and the same on every platform, so the
// host computes a firmware's op_state_size() exactly. Without bound state, execute() inits each op
// into a stack buffer of kMaxOpStateBytes before its run.
using InitStateFn = void (*)(const OpContext& ctx, void* state);
struct OpState {
  InitStateFn init;
  uint32_t bytes;
};
constexpr uint32_t kMaxOpStateBytes = 256;
// Program::init_op_state's state starts with one slot per op: its OpImpl's address.
constexpr uint32_t kOpSlotBytes = 8;
static_assert(sizeof(const void*) <= kOpSlotBytes, "an op slot holds a pointer");

// The OpState of a kernel whose state is the struct S with `init`; Bytes >= sizeof(S) on every
// platform (static_assert), a multiple of 8.
template <class S, void (*Init)(const OpContext&, S*), uint32_t Bytes>
void init_state(const OpContext& ctx, void* state) {
  static_assert(sizeof(S) <= Bytes && Bytes % 8 == 0 && Bytes <= kMaxOpStateBytes && alignof(S) <= 8,
                "an op state's bytes must hold it, on every platform");
  Init(ctx, new (state) S);
}
template <class S, void (*Init)(const OpContext&, S*), uint32_t Bytes>
inline constexpr OpState kOpState{init_state<S, Init, Bytes>, Bytes};

template <class S>
const S& state_of(const OpContext& ctx) { return *static_cast<const S*>(ctx.state); }

struct OpImpl {
  fb::OpParams params;  // the union member the kernel id takes
  VerifyParamsFn verify_params;  // verify_params<that table>
  int32_t min_inputs, max_inputs;  // optional inputs may be -1
  int32_t min_outputs, max_outputs;
  const char* input_counts;   // the loader's requirement naming the limits, "must be 1 to 16"
  const char* output_counts;
  bool float_fallback;
  PrepareFn prepare;
  RunFn run;
  // Kernels that may write their output over input 0 from some bytes below it: the lag; nullptr
  // for the others (the loader refuses such an overlap).
  InPlaceLagFn in_place_lag;
  // Kernels whose runs read decoded state: its OpState; nullptr for the others (they decode on
  // every run).
  const OpState* state = nullptr;
};

// The FlatBuffers verifier checks only the 4-byte alignment of a vector's length field: 8-byte
// elements at a 4-aligned address are undefined behaviour to read (the buffer itself is 16-aligned).
template <typename T>
int64_t misalignment(const flatbuffers::Vector<T>* v) {
  if (!v || v->size() == 0) return 0;  // nothing is read (and the writer leaves empty vectors 4-aligned)
  return static_cast<int64_t>(reinterpret_cast<uintptr_t>(v->data()) % alignof(T));
}

// Shared checks for the prepare functions.
Status require_dtype(const OpContext& ctx, const char* field, const TensorView& t, DType dtype);
Status require_rank(const OpContext& ctx, const char* field, const TensorView& t, int32_t rank);
Status require_same_shape(const OpContext& ctx, const char* field, const TensorView& t,
                          const TensorView& like);
// A dim attribute in [-rank, rank) normalized to [0, rank).
Status normalize_dim(const OpContext& ctx, const char* field, int64_t dim, int32_t rank,
                     int32_t* out);
Status require_rank_le(const OpContext& ctx, const char* field, const TensorView& t, int32_t rank);
// Input 0 of a kernel with an integer (int8 / int16) and a float32 form: the dtype of its form.
Status require_input_dtype(const OpContext& ctx, bool integer);
// Input 0 and the output: `dtype`, one shape, both contiguous (a row-wise kernel such as `op`).
Status require_contiguous_same_shape(const OpContext& ctx, DType dtype, const char* op);
// Optional input `input` (a per-row weight or bias): absent, or `dtype`, contiguous, `row_size` values.
Status require_row_operand(const OpContext& ctx, int32_t input, const char* field, DType dtype, int64_t row_size);

}  // namespace cortexm::runtime
