// What a runtime op implementation sees: its op table, tensors as views, scratch. Each kernel id
// has one file in runtime/ops with a prepare (load-time validation, arena == nullptr) and a run.
#pragma once

#include <type_traits>

#include "program/program_generated.h"
#include "runtime/op_resolver.h"
#include "runtime/program.h"

namespace cortexm::runtime {

struct OpContext {
  const Program& program;
  const fb::Op& op;
  int32_t index;   // op index, for errors
  uint8_t* arena;  // nullptr while preparing
  // While preparing: the largest scratch an op needs beyond its planned one (require_scratch).
  size_t* extra_scratch = nullptr;
  // While running on the host: the run's x86 kernels, or null.
  const HostKernels* host = nullptr;

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
