// The program runtime: a verified, read-only view of a program file and its executor.
// Freestanding: no heap, no exceptions; the caller owns the program bytes (16-byte aligned, kept
// alive: constants are used in place) and the arena (16-byte aligned, program.required_arena_size()
// bytes).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cortexm/kernels/host_variant.h"
#include "cortexm/kernels/isa.h"
#include "runtime/status.h"
#include "runtime/tensor_view.h"

namespace cortexm::fb {
struct Program;
struct Op;
struct Tensor;
}  // namespace cortexm::fb

namespace cortexm::runtime {

class OpResolver;
struct OpImpl;
struct DataRef;

// The program format this runtime writes, and the oldest it still reads. 2: Conv2d and Linear
// params gained bias_includes_input_offset, and the FloatBinary kernel came (a version-1 program
// uses neither and runs as before; a version-1 runtime refuses version-2 programs instead of
// ignoring what it does not know). 3: the LayerNorm and QuantizedLayerNorm kernels; the
// FloatConvolution, FloatPool2d, FloatMatmul, Sum, Amax, Amin, FloatAmax and FloatAmin kernels;
// UnaryParams gained the constants a, b, c and the UnaryFns from Clamp on. 4: the Argmax, Argmin,
// FloatArgmax, FloatArgmin, FloatUpsampleBilinear2d and QuantizedUpsampleBilinear2d kernels.
// 5: the 16x16 QuantizedConv2dS16W16 and QuantizedLinearS16W16 kernels. 6: the GroupNorm and
// QuantizedGroupNorm kernels. 7: the QuantizedGroupNormS16 kernel. 8: the QuantizedSvdfState and
// QuantizedSvdfOutput kernels.
#define CORTEXM_SCHEMA_VERSION 8  // a macro too: the loader's message names it
#define CORTEXM_STRINGIFY_VALUE(x) #x
#define CORTEXM_STRINGIFY(x) CORTEXM_STRINGIFY_VALUE(x)
constexpr uint32_t kSchemaVersion = CORTEXM_SCHEMA_VERSION;
constexpr uint32_t kOldestSchemaVersion = 1;
constexpr size_t kAlignment = 16;  // constants, arena base and bundled data
constexpr size_t kOpStateAlignment = 8;  // init_op_state's buffer
// The largest program buffer load() takes: FlatBuffers' verifier takes buffers below 2^31 - 1 bytes.
constexpr size_t kMaxProgramBytes = (size_t{1} << 31) - 2;

class Program {
 public:
  // Verifies the buffer (FlatBuffers structure, then every tensor, op, offset, size and index, and
  // each op's parameters through its kernel's prepare step) and on success fills `program`. Its
  // ops run the kernels `ops` registers (kept alive with the program); a kernel it does not
  // register fails with StatusCode::kUnsupported. Without `ops`: every kernel (all_ops()), which
  // links them all.
  static Status load(const void* data, size_t size, Program* program, const OpResolver& ops);
  static Status load(const void* data, size_t size, Program* program);

  const fb::Program& fb() const { return *program_; }
  size_t arena_size() const { return arena_size_; }
  // The bytes an arena must hold on this runtime: arena_size(), then, when this runtime's kernels
  // need more scratch for an op than the program planned for its isa (the host's scalar kernels
  // running a program for the M4 or M55), a region after it that such ops use instead.
  size_t required_arena_size() const { return extra_scratch_ ? extra_scratch_offset() + extra_scratch_ : arena_size_; }
  size_t extra_scratch_offset() const { return (arena_size_ + kAlignment - 1) / kAlignment * kAlignment; }
  size_t constant_size() const { return constant_size_; }
  Isa isa() const { return isa_; }
  int32_t num_tensors() const { return num_tensors_; }
  int32_t num_ops() const { return num_ops_; }
  int32_t num_inputs() const;
  int32_t num_outputs() const;
  int32_t input_tensor(int32_t i) const;   // tensor index of graph input i
  int32_t output_tensor(int32_t i) const;
  int32_t float_ops() const { return float_ops_; }  // float fallback ops in the program
  const OpResolver& ops() const { return *ops_; }
  // The implementation of op `index` (registered: load checked every op).
  const OpImpl& op_impl(int32_t index) const;

  // The bytes of per-op state init_op_state() needs for this program: one 8-byte slot per op, plus
  // each op's decoded kernel params (OpState::bytes of its kernel). The same on every platform.
  size_t op_state_size() const { return op_state_size_; }
  // Decodes every op's params once into `state` (8-byte aligned, op_state_size() bytes, kept alive
  // and unchanged while the program runs: like TFLite Micro's persistent per-op data, but in memory
  // the caller gives); execute() then runs each op from it. Without it execute() decodes each op on
  // every run. Fails only on a wrong buffer (null, misaligned, too small).
  Status init_op_state(void* state, size_t bytes);
  // The state init_op_state wrote (nullptr before).
  const uint8_t* op_state() const { return op_state_; }
  const uint8_t* constant_data() const { return constant_data_; }
  // Where tensor `index`'s bytes are in a run.
  DataRef data_ref(int32_t index) const;

  // Tensor `index` as a strided view; arena tensors point into `arena` (nullptr: data is nullptr).
  TensorView tensor(int32_t index, uint8_t* arena) const;
  // The memory order of tensor `index`'s logical dims (outermost first) into order[0, rank).
  void dim_order(int32_t index, int32_t* order) const;

 private:
  const fb::Program* program_ = nullptr;
  const OpResolver* ops_ = nullptr;
  size_t arena_size_ = 0;
  size_t extra_scratch_ = 0;  // the largest scratch an op needs beyond its planned one
  size_t constant_size_ = 0;
  size_t op_state_size_ = 0;
  const uint8_t* op_state_ = nullptr;
  const uint8_t* constant_data_ = nullptr;
  Isa isa_ = Isa::kScalar;
  int32_t num_tensors_ = 0;
  int32_t num_ops_ = 0;
  int32_t float_ops_ = 0;
};

// Called before (after = false) and after each op; the host measures time in between, a target can
// read cycle counters.
using OpHook = void (*)(void* context, int32_t op_index, uint8_t kernel_id, bool after);

struct Profiler {
  OpHook hook = nullptr;
  void* context = nullptr;
};

struct RunStats {
  int32_t ops = 0;
  int32_t float_ops = 0;  // float fallback ops executed
};

// The host only: the x86 kernels one run takes.
struct HostKernels {
  // Every op of the run runs this one (the caller reads host_variant() once for the run).
  HostVariant variant = HostVariant::kScalar;
  // Per op, its weights as host_pack packed them for `variant`, or null (every op when null).
  const void* const* packed = nullptr;
};

// Runs every op in order. Inputs must already be in the arena (Program::tensor of input_tensor(i));
// outputs are read from it afterwards. A run consumes its inputs: the planner lets ops write over an
// input's bytes once it is dead (unless the program was written with preserve_inputs), so set every
// input before every run. Outputs are never written over. Fails only on a wrong arena (null, misaligned, smaller than
// program.required_arena_size()).
// host: the x86 kernels of the run; null: on x86-64, host_variant() read once at the start, no
// packed weights.
Status execute(const Program& program, uint8_t* arena, size_t arena_bytes,
               const Profiler* profiler = nullptr, RunStats* stats = nullptr,
               const HostKernels* host = nullptr);

// The host only (0 elsewhere, and for ops whose kernels read their weights as they are): the bytes
// op `index`'s weights take packed for the x86 variant `variant`, once after load; with `packed`
// (64-byte aligned, that many bytes, kept alive and unchanged while the program runs) also writes
// them there. A run of that variant then gives each op its packing (HostKernels::packed).
size_t host_pack(const Program& program, int32_t index, HostVariant variant, void* packed);

// Name of a kernel id ("QuantizedConv2d", ...), "unknown" when out of range.
const char* kernel_name(uint8_t kernel_id);

}  // namespace cortexm::runtime
