// Program::load: verifies a program buffer completely before anything runs from it.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "program/program_generated.h"
#include "runtime/op_context.h"

namespace cortexm::runtime {

namespace {

constexpr uint64_t kMaxBytes = uint64_t{1} << 32;  // a Cortex-M address space

// Byte size of a tensor's logical shape; false when a dim is negative or the size exceeds 2^32.
// The bound also holds for the product of the non-zero dims, so element counts and strides
// computed from a shape with a zero dim (numel 0) cannot overflow either.
bool tensor_bytes(const fb::Tensor& t, uint64_t* bytes) {
  uint64_t n = dtype_size(static_cast<DType>(t.dtype()));
  if (n == 0) return false;  // unknown dtype
  bool empty = false;
  if (t.shape())
    for (int64_t d : *t.shape()) {
      if (d < 0) return false;
      if (d == 0) {
        empty = true;
        continue;
      }
      if (static_cast<uint64_t>(d) > kMaxBytes / n) return false;  // n * d > 2^32, without wrapping
      n *= static_cast<uint64_t>(d);
    }
  *bytes = empty ? 0 : n;
  return true;
}

Status check_tensor(const fb::Program& p, int32_t index, size_t arena_size) {
  const fb::Tensor* t = p.tensors()->Get(index);
  auto fail = [&](const char* field, int64_t value, const char* requirement, int64_t element = -1) {
    return program_error("tensors", index, field, value, requirement, element);
  };
  if (!t) return fail("tensor", 0, "must be present");
  if (t->dtype() >= kNumDTypes) return fail("dtype", t->dtype(), "must be a known dtype");
  const int64_t rank = t->shape() ? t->shape()->size() : 0;
  if (rank > kMaxRank) return fail("shape.size", rank, "must be <= 8");
  if (const int64_t m = misalignment(t->shape())) return fail("shape.address % 8", m, "must be 0 (malformed file)");
  for (int64_t d = 0; d < rank; ++d)
    if (t->shape()->Get(d) < 0) return fail("shape", t->shape()->Get(d), "must be >= 0", d);
  uint64_t bytes = 0;
  if (!tensor_bytes(*t, &bytes)) return fail("shape", rank, "describes more than 2^32 bytes");
  if (t->dim_order() && t->dim_order()->size() != 0) {
    if (static_cast<int64_t>(t->dim_order()->size()) != rank)
      return fail("dim_order.size", t->dim_order()->size(), "must be 0 or the rank");
    bool seen[kMaxRank] = {};
    for (int64_t k = 0; k < rank; ++k) {
      const uint8_t d = t->dim_order()->Get(k);
      if (d >= rank || seen[d]) return fail("dim_order", d, "must be a permutation of the dims", k);
      seen[d] = true;
    }
  }
  if (const fb::QParams* q = t->qparams()) {
    const int64_t scales = q->scales() ? q->scales()->size() : 0;
    const int64_t zps = q->zero_points() ? q->zero_points()->size() : 0;
    if (scales < 1) return fail("qparams.scales.size", scales, "must be >= 1");
    if (zps != scales) return fail("qparams.zero_points.size", zps, "must equal qparams.scales.size");
    if (const int64_t m = misalignment(q->scales()))
      return fail("qparams.scales.address % 8", m, "must be 0 (malformed file)");
    if (const int64_t m = misalignment(q->zero_points()))
      return fail("qparams.zero_points.address % 8", m, "must be 0 (malformed file)");
    for (int64_t i = 0; i < scales; ++i) {
      const double s = q->scales()->Get(i);
      // NaN, inf and -1e300 have no int64 value: the host message reads the scale from the file.
      if (!(s > 0.0) || std::isinf(s)) return fail("qparams.scales", 0, "must be finite and > 0", i);
    }
    if (q->axis() < -1 || q->axis() >= rank) return fail("qparams.axis", q->axis(), "must be -1 or a dim");
    if (q->axis() >= 0 && t->shape()->Get(q->axis()) != scales)
      return fail("qparams.scales.size", scales, "must equal the extent of qparams.axis");
    if (q->axis() < 0 && scales != 1) return fail("qparams.scales.size", scales, "must be 1 for per-tensor qparams");
    if (q->quant_min() > q->quant_max()) return fail("qparams.quant_min", q->quant_min(), "must be <= quant_max");
  }
  const uint64_t es = dtype_size(static_cast<DType>(t->dtype()));
  switch (t->location()) {
    case fb::Location_Arena:
      if (t->offset() > arena_size || bytes > arena_size - t->offset())
        return fail("offset", static_cast<int64_t>(t->offset()), "tensor must lie within the arena");
      if (t->offset() % es != 0)
        return fail("offset", static_cast<int64_t>(t->offset()), "must be a multiple of the element size");
      break;
    case fb::Location_Constant: {
      const int64_t count = p.constants() ? p.constants()->size() : 0;
      if (t->constant() >= count) return fail("constant", t->constant(), "must index Program.constants");
      const fb::ConstantSegment* seg = p.constants()->Get(t->constant());
      if (seg->size() != bytes) return fail("constant", t->constant(), "segment size must equal the tensor's bytes");
      break;
    }
    default:
      return fail("location", t->location(), "must be Arena or Constant");
  }
  return kStatusOk;
}

bool is_arena(const fb::Program& p, int32_t tensor) {
  return p.tensors()->Get(tensor)->location() == fb::Location_Arena;
}

struct Range {
  uint64_t begin, end;
  bool overlaps(const Range& o) const { return begin < o.end && o.begin < end; }
};

Range arena_range(const Program& program, int32_t tensor) {
  const fb::Tensor* t = program.fb().tensors()->Get(tensor);
  uint64_t bytes = 0;
  tensor_bytes(*t, &bytes);
  return {t->offset(), t->offset() + bytes};
}

// The input a kernel may overwrite with its output (the planner's in-place rule, OpSchema's
// in_place_input): its kernel reads element i of that input before writing element i and reads no
// other element of it. -1: the kernel needs its output apart from every input.
int32_t in_place_input(uint8_t kernel) {
  switch (kernel) {
    case fb::KernelId_QuantizedAdd:
    case fb::KernelId_QuantizedSub:
    case fb::KernelId_QuantizedMaximum:
    case fb::KernelId_QuantizedMinimum:
    case fb::KernelId_Requantize:
    case fb::KernelId_QuantizedActivation:
    case fb::KernelId_QuantizedActivationS16:
    case fb::KernelId_QuantizePerTensor:
      return 0;
    default:
      return -1;
  }
}

// In-place kernels that stream forward (OpSchema's in_place_narrowing): each block of output is
// stored after the input elements its bytes lie over are read, so an output with the same shape
// and strides and an element no larger may start at the input's first byte (float -> int8 / int16).
bool narrows_in_place(uint8_t kernel) { return kernel == fb::KernelId_QuantizePerTensor; }

// A Permute (permute_copy, _clone_dim_order) whose output puts every element where the input has it:
// the planner aliases it (a permute into a dim order that relabels the input's, NHWC as
// channels-last NCHW) and it runs as nothing.
bool keeps_bytes_permute(const fb::Op& op, const TensorView& in, const TensorView& out) {
  if (op.kernel() != fb::KernelId_Permute) return false;
  const auto* params = op.params_as_PermuteParams();
  if (params == nullptr || params->dims() == nullptr) return false;
  return permute_keeps_bytes(in, out, params->dims()->data(), static_cast<int32_t>(params->dims()->size()));
}

// The verifier of op's params table: its kernel's, or that of another kernel `ops` registers taking
// the same table; nullptr when none does (no params, an unknown table, or one of a kernel this
// firmware is built without: check_op refuses such an op before anything reads its params).
VerifyParamsFn params_verifier(const fb::Op& op, const OpResolver& ops) {
  const OpImpl* impl = ops.find(op.kernel());
  if (impl && impl->params == op.params_type()) return impl->verify_params;
  for (int32_t i = 0; i < ops.size(); ++i)
    if (ops.entry(i).impl->params == op.params_type()) return ops.entry(i).impl->verify_params;
  return nullptr;
}

// fb::Op::Verify (program_generated.h) with the params table verified by params_verifier instead of
// the OpParams union's verifier, which takes every params table (and so would link them all).
// Verifies every field of Op (tests/py/test_loader_verify.py checks that against program.fbs).
bool verify_op(flatbuffers::Verifier& v, const fb::Op* op, const OpResolver& ops) {
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(op);
  if (!(table->VerifyTableStart(v) && table->VerifyOffset(v, fb::Op::VT_NAME) && v.VerifyString(op->name()) &&
        table->VerifyField<uint8_t>(v, fb::Op::VT_KERNEL, 1) &&
        table->VerifyField<uint8_t>(v, fb::Op::VT_PARAMS_TYPE, 1) && table->VerifyOffset(v, fb::Op::VT_PARAMS)))
    return false;
  const VerifyParamsFn verify_params = params_verifier(*op, ops);
  return (!verify_params || !op->params() || verify_params(v, op->params())) &&
         table->VerifyOffset(v, fb::Op::VT_INPUTS) &&
         v.VerifyVector(op->inputs()) && table->VerifyOffset(v, fb::Op::VT_OUTPUTS) &&
         v.VerifyVector(op->outputs()) && table->VerifyField<uint64_t>(v, fb::Op::VT_SCRATCH_OFFSET, 8) &&
         table->VerifyField<uint64_t>(v, fb::Op::VT_SCRATCH_SIZE, 8) && v.EndTable();
}

// fb::VerifySizePrefixedProgramBuffer with verify_op for the ops; the caller checked the buffer's
// size, size prefix and identifier. Verifies every field of Program.
bool verify_program(flatbuffers::Verifier& v, const uint8_t* bytes, const OpResolver& ops) {
  const flatbuffers::uoffset_t root = v.VerifyOffset(sizeof(flatbuffers::uoffset_t));
  if (root == 0) return false;
  const auto* p = reinterpret_cast<const fb::Program*>(bytes + sizeof(flatbuffers::uoffset_t) + root);
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(p);
  if (!(table->VerifyTableStart(v) && table->VerifyField<uint32_t>(v, fb::Program::VT_SCHEMA_VERSION, 4) &&
        table->VerifyOffset(v, fb::Program::VT_TARGET) && v.VerifyString(p->target()) &&
        table->VerifyField<uint8_t>(v, fb::Program::VT_ISA, 1) && table->VerifyOffset(v, fb::Program::VT_TENSORS) &&
        v.VerifyVector(p->tensors()) && v.VerifyVectorOfTables(p->tensors()) &&
        table->VerifyOffset(v, fb::Program::VT_OPS) && v.VerifyVector(p->ops())))
    return false;
  if (p->ops())
    for (uint32_t i = 0; i < p->ops()->size(); ++i)
      if (!verify_op(v, p->ops()->Get(i), ops)) return false;
  return table->VerifyOffset(v, fb::Program::VT_INPUTS) && v.VerifyVector(p->inputs()) &&
         table->VerifyOffset(v, fb::Program::VT_OUTPUTS) && v.VerifyVector(p->outputs()) &&
         table->VerifyField<uint64_t>(v, fb::Program::VT_ARENA_SIZE, 8) &&
         table->VerifyOffset(v, fb::Program::VT_CONSTANTS) && v.VerifyVector(p->constants()) &&
         table->VerifyOffset(v, fb::Program::VT_CONSTANT_DATA) && v.VerifyVector(p->constant_data()) &&
         table->VerifyOffset(v, fb::Program::VT_BUNDLED) && v.VerifyVector(p->bundled()) &&
         v.VerifyVectorOfTables(p->bundled()) && v.EndTable();
}

// The longest string (target, op or tensor name) a program may hold; docs/program.md.
constexpr uint32_t kMaxStringLength = 256;

// A string of the file: absent, or at most kMaxStringLength printable ASCII characters (0x20 to
// 0x7e), so errors, profiles and logs that print it stay one plain line.
Status check_string(const flatbuffers::String* s, const char* section, int64_t index, const char* field,
                    const char* size_field) {
  if (!s) return kStatusOk;
  if (s->size() > kMaxStringLength)
    return program_error(section, index, size_field, s->size(), "must be at most 256 characters");
  for (uint32_t i = 0; i < s->size(); ++i) {
    const auto c = static_cast<uint8_t>(s->Get(i));
    if (c < 0x20 || c > 0x7e)
      return program_error(section, index, field, c, "must be printable ASCII (characters 0x20 to 0x7e)", i);
  }
  return kStatusOk;
}

// Every string of the file, before anything prints one: the target, tensor names and op names.
Status check_strings(const fb::Program& p) {
  CORTEXM_RETURN_IF_STATUS(check_string(p.target(), "program", -1, "target", "target.size"));
  for (uint32_t i = 0; i < p.tensors()->size(); ++i)
    if (const fb::Tensor* t = p.tensors()->Get(i))
      CORTEXM_RETURN_IF_STATUS(check_string(t->name(), "tensors", i, "name", "name.size"));
  for (uint32_t i = 0; i < p.ops()->size(); ++i)
    if (const fb::Op* op = p.ops()->Get(i))
      CORTEXM_RETURN_IF_STATUS(check_string(op->name(), "ops", i, "name", "name.size"));
  return kStatusOk;
}

// extra_scratch: the largest scratch an op needs beyond its planned one, so far.
Status check_op(const Program& program, int32_t index, size_t* extra_scratch) {
  const fb::Program& p = program.fb();
  const fb::Op* op = p.ops()->Get(index);
  auto fail = [&](const char* field, int64_t value, const char* requirement, int64_t element = -1) {
    return program_error("ops", index, field, value, requirement, element);
  };
  if (!op) return fail("op", 0, "must be present");
  if (op->kernel() > fb::KernelId_MAX) return fail("kernel", op->kernel(), "must be a known kernel id");
  const OpImpl* impl = program.ops().find(op->kernel());
  if (!impl)
    return program_error("ops", index, "kernel", op->kernel(),
                         "is not registered in this runtime's OpResolver (firmware built without this kernel: "
                         "register it, or export the program again with Program.export_c)",
                         -1, StatusCode::kUnsupported);
  if (op->params_type() != impl->params)
    return fail("params_type", op->params_type(), "must be the params table of the kernel");
  if (!op->params()) return fail("params", 0, "must be present");
  const int64_t num_in = op->inputs() ? op->inputs()->size() : 0;
  const int64_t num_out = op->outputs() ? op->outputs()->size() : 0;
  if (!op->inputs() || num_in < impl->min_inputs || num_in > impl->max_inputs)
    return fail("inputs.size", num_in, impl->input_counts);
  if (!op->outputs() || num_out < impl->min_outputs || num_out > impl->max_outputs)
    return fail("outputs.size", num_out, impl->output_counts);
  for (int64_t i = 0; i < num_in; ++i) {
    const int32_t t = op->inputs()->Get(i);
    const bool optional = i >= impl->min_inputs;
    if (t < (optional ? -1 : 0) || t >= program.num_tensors())
      return fail("inputs", t, "must index Program.tensors", i);
  }
  const uint64_t scratch_end = op->scratch_offset() + op->scratch_size();
  if (op->scratch_offset() > program.arena_size() || op->scratch_size() > program.arena_size() - op->scratch_offset())
    return fail("scratch_offset", static_cast<int64_t>(op->scratch_offset()), "scratch must lie within the arena");
  const Range scratch{op->scratch_offset(), scratch_end};
  int64_t below_input = -1;  // bytes the output starts below input 0 it overlaps (writes_below_input)
  for (int64_t o = 0; o < num_out; ++o) {
    const int32_t t = op->outputs()->Get(o);
    if (t < 0 || t >= program.num_tensors()) return fail("outputs", t, "must index Program.tensors", o);
    if (!is_arena(p, t)) return fail("outputs", t, "must be an arena tensor", o);
    const Range out = arena_range(program, t);
    if (op->scratch_size() && out.overlaps(scratch))
      return fail("scratch_offset", static_cast<int64_t>(op->scratch_offset()), "scratch overlaps an output");
    for (int64_t i = 0; i < num_in; ++i) {
      const int32_t in = op->inputs()->Get(i);
      if (in < 0 || !is_arena(p, in)) continue;
      const Range src = arena_range(program, in);
      if (op->scratch_size() && src.overlaps(scratch))
        return fail("scratch_offset", static_cast<int64_t>(op->scratch_offset()), "scratch overlaps an input");
      if (!out.overlaps(src) || src.end == src.begin) continue;
      // Only a view that leaves every element where it is (the planner's alias), or an in-place
      // kernel writing exactly over its in-place input's bytes in the same layout, may overlap.
      const TensorView src_view = program.tensor(in, nullptr), out_view = program.tensor(t, nullptr);
      const bool alias = src.begin == out.begin && (op->kernel() == fb::KernelId_View ? same_bytes(src_view, out_view)
                                                                                     : keeps_bytes_permute(*op, src_view, out_view));
      const bool in_place_input_here = o == 0 && i == in_place_input(op->kernel()) && src.begin == out.begin &&
                                       src_view.same_layout(out_view);
      const bool same_bytes_in_place = src.end == out.end && src_view.dtype == out_view.dtype;
      const bool narrowing = narrows_in_place(op->kernel()) && out_view.element_size() <= src_view.element_size();
      const bool in_place = in_place_input_here && (same_bytes_in_place || narrowing);
      // Kernels with an in-place lag may write their output over input 0 from below it.
      const bool below = o == 0 && i == 0 && impl->in_place_lag && out.begin < src.begin &&
                         src_view.dtype == out_view.dtype;
      if (!alias && !in_place && !below) {
        if (narrows_in_place(op->kernel()) && o == 0 && i == 0)
          return fail("outputs", t,
                      "output overlaps input 0 other than in place (it must start at the input's first byte with "
                      "the same shape and strides and an element no larger)", o);
        return fail("outputs", t, "output overlaps an input in the arena", o);
      }
      if (below) below_input = static_cast<int64_t>(src.begin - out.begin);
    }
  }
  const OpContext ctx{program, *op, index, nullptr, extra_scratch};
  CORTEXM_RETURN_IF_STATUS(impl->prepare(ctx));
  if (below_input >= 0) {
    const int64_t lag = impl->in_place_lag(ctx);
    if (lag < 0)
      return fail("outputs", op->outputs()->Get(0),
                  "output overlaps input 0, which the kernel cannot write in place for these params");
    if (below_input < lag)
      return fail("outputs", op->outputs()->Get(0),
                  "output overlaps input 0 and starts fewer bytes below it than the kernel's in-place lag");
  }
  return kStatusOk;
}

// What an arena byte holds just before op `before` runs: the last earlier op whose output covers
// it wrote it; the last whose scratch covers it left it undefined (kernels and isas use scratch
// differently); with neither, a program input wrote it or nothing did.
enum class ByteState : uint8_t { kWritten, kScratch, kUnwritten };

// The state of byte `at` before op `before`; *run_end: a byte (<= limit) before which every byte
// from `at` on is in that state. Scans the ops back from `before` until one covers `at`, lowering
// the run's end to every later range starting inside it.
ByteState byte_state(const Program& program, int32_t before, uint64_t at, uint64_t limit, uint64_t* run_end) {
  const fb::Program& p = program.fb();
  uint64_t end = limit;
  // True when `r` holds `at`; else shortens the run to a range starting after `at`.
  const auto covers = [&](const Range& r) {
    if (r.begin <= at && at < r.end) {
      *run_end = r.end < end ? r.end : end;
      return true;
    }
    if (at < r.begin && r.begin < r.end && r.begin < end) end = r.begin;
    return false;
  };
  for (int32_t j = before - 1; j >= 0; --j) {
    const fb::Op* op = p.ops()->Get(j);
    if (covers({op->scratch_offset(), op->scratch_offset() + op->scratch_size()})) return ByteState::kScratch;
    for (uint32_t o = 0; o < op->outputs()->size(); ++o)
      if (covers(arena_range(program, op->outputs()->Get(o)))) return ByteState::kWritten;
  }
  for (int32_t i = 0; i < program.num_inputs(); ++i)
    if (covers(arena_range(program, program.input_tensor(i)))) return ByteState::kWritten;
  *run_end = end;
  return ByteState::kUnwritten;
}

// kWritten when every byte of arena tensor `tensor` is written before op `before` (num_ops: after
// the last op), else the state of its first byte that is not. A cursor walks the tensor's bytes
// run by run (each run ends at a range boundary), so the work is bounded by the ranges, not bytes.
ByteState tensor_state(const Program& program, int32_t before, int32_t tensor) {
  const Range r = arena_range(program, tensor);
  for (uint64_t at = r.begin; at < r.end;) {
    uint64_t next = r.end;
    const ByteState state = byte_state(program, before, at, r.end, &next);
    if (state != ByteState::kWritten) return state;
    at = next;
  }
  return ByteState::kWritten;
}

// Every arena byte an op reads was written before it (by a program input or an earlier op's
// output), and so was every byte of every program output: a run's outputs depend on its inputs
// only, never on what the arena held before. Kernels write all of each output (in place too).
Status check_writes_before_reads(const Program& program) {
  const fb::Program& p = program.fb();
  for (int32_t k = 0; k < program.num_ops(); ++k) {
    const fb::Op* op = p.ops()->Get(k);
    for (uint32_t i = 0; i < op->inputs()->size(); ++i) {
      const int32_t t = op->inputs()->Get(i);
      if (t < 0 || !is_arena(p, t)) continue;
      const ByteState state = tensor_state(program, k, t);
      if (state == ByteState::kScratch)
        return program_error("ops", k, "inputs", t,
                             "must be written before the op reads it: some of its arena bytes were last an earlier "
                             "op's scratch, whose contents are undefined", i);
      if (state == ByteState::kUnwritten)
        return program_error("ops", k, "inputs", t,
                             "must be written before the op reads it: some of its arena bytes are in no program "
                             "input and no earlier op's output", i);
    }
  }
  for (int32_t i = 0; i < program.num_outputs(); ++i) {
    const ByteState state = tensor_state(program, program.num_ops(), program.output_tensor(i));
    if (state == ByteState::kScratch)
      return program_error("outputs", i, "tensor", program.output_tensor(i),
                           "must be written by the program: some of its arena bytes were last an op's scratch, "
                           "whose contents are undefined");
    if (state == ByteState::kUnwritten)
      return program_error("outputs", i, "tensor", program.output_tensor(i),
                           "must be written by the program: some of its arena bytes are in no program input and "
                           "no op's output");
  }
  return kStatusOk;
}

Status check_io(const Program& program, const flatbuffers::Vector<int32_t>* list, const char* section) {
  if (!list) return program_error(section, -1, "size", 0, "must be present");
  for (uint32_t i = 0; i < list->size(); ++i) {
    const int32_t t = list->Get(i);
    if (t < 0 || t >= program.num_tensors()) return program_error(section, i, "tensor", t, "must index Program.tensors");
    if (!is_arena(program.fb(), t)) return program_error(section, i, "tensor", t, "must be an arena tensor");
  }
  return kStatusOk;
}

Status check_bundled(const Program& program) {
  const fb::Program& p = program.fb();
  if (!p.bundled()) return kStatusOk;
  for (uint32_t c = 0; c < p.bundled()->size(); ++c) {
    const fb::BundledCase* bc = p.bundled()->Get(c);
    for (int pass = 0; pass < 2; ++pass) {
      const auto* list = pass == 0 ? bc->inputs() : bc->expected_outputs();
      const auto* io = pass == 0 ? p.inputs() : p.outputs();
      const char* field = pass == 0 ? "inputs.size" : "expected_outputs.size";
      const int64_t count = list ? list->size() : 0;
      if (count != static_cast<int64_t>(io->size())) return program_error("bundled", c, field, count, "must match the program's");
      for (int64_t i = 0; i < count; ++i) {
        const auto* data = list->Get(i)->data();
        const uint64_t want = program.tensor(io->Get(i), nullptr).nbytes();
        const int64_t got = data ? data->size() : -1;
        if (got < 0 || static_cast<uint64_t>(got) != want)
          return program_error("bundled", c, pass == 0 ? "inputs.data.size" : "expected_outputs.data.size", got,
                               "must equal the tensor's bytes", i);
      }
    }
  }
  return kStatusOk;
}

}  // namespace

Status Program::load(const void* data, size_t size, Program* program, const OpResolver& ops) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  if (!data || size < 12) return program_error("program", -1, "size", static_cast<int64_t>(size), "is too small for a program");
  static_assert(kMaxProgramBytes + 1 == FLATBUFFERS_MAX_BUFFER_SIZE, "the message below names the limit");
  if (size > kMaxProgramBytes)
    return program_error("program", -1, "size", static_cast<int64_t>(size), "must be <= 2^31 - 2 (the FlatBuffers limit)");
  if (reinterpret_cast<uintptr_t>(data) % kAlignment != 0)
    return program_error("program", -1, "address", static_cast<int64_t>(reinterpret_cast<uintptr_t>(data) % kAlignment),
                         "must be 16-byte aligned", -1, StatusCode::kInvalidArgument);
  // Size-prefixed: the first 4 bytes give the length of the rest, so any truncation is caught.
  uint32_t prefix = 0;
  std::memcpy(&prefix, bytes, sizeof(prefix));
  if (prefix != size - sizeof(prefix))
    return program_error("program", -1, "size", static_cast<int64_t>(size),
                         "must be 4 + the size prefix (the file is truncated or has trailing bytes)");
  if (!fb::SizePrefixedProgramBufferHasIdentifier(bytes))
    return program_error("program", -1, "file_identifier", 0, "must be \"CMPT\" (not a cortexm program)");
  flatbuffers::Verifier verifier(bytes, size);
  if (!verify_program(verifier, bytes, ops))
    return program_error("program", -1, "flatbuffer", static_cast<int64_t>(size), "is malformed or truncated");
  const fb::Program* p = fb::GetSizePrefixedProgram(bytes);
  static_assert(kOldestSchemaVersion == 1, "the message below names the oldest version");
  if (p->schema_version() < kOldestSchemaVersion || p->schema_version() > kSchemaVersion)
    return program_error("program", -1, "schema_version", p->schema_version(),
                         "is not a program format this runtime reads (1 to " CORTEXM_STRINGIFY(CORTEXM_SCHEMA_VERSION)
                         "): write the program again with this "
                         "cortexm", -1, StatusCode::kUnsupported);
  if (p->isa() > fb::Isa_MAX) return program_error("program", -1, "isa", p->isa(), "must be Scalar, Dsp or Mve");
  if (p->arena_size() > kMaxBytes) return program_error("program", -1, "arena_size", static_cast<int64_t>(p->arena_size()), "is too large");
  if (!p->tensors()) return program_error("program", -1, "tensors", 0, "must be present");
  if (!p->ops()) return program_error("program", -1, "ops", 0, "must be present");
  CORTEXM_RETURN_IF_STATUS(check_strings(*p));

  Program out;
  out.program_ = p;
  out.ops_ = &ops;
  out.arena_size_ = static_cast<size_t>(p->arena_size());
  out.isa_ = static_cast<Isa>(p->isa());
  out.num_tensors_ = static_cast<int32_t>(p->tensors()->size());
  out.num_ops_ = static_cast<int32_t>(p->ops()->size());

  // Constants: 16-byte aligned segments within constant_data, itself 16-byte aligned in memory.
  const auto* blob = p->constant_data();
  const uint64_t blob_size = blob ? blob->size() : 0;
  out.constant_size_ = static_cast<size_t>(blob_size);
  out.constant_data_ = blob ? blob->data() : nullptr;
  if (blob_size > 0 && reinterpret_cast<uintptr_t>(blob->data()) % kAlignment != 0)
    return program_error("constants", -1, "constant_data", 0, "must be 16-byte aligned");
  // The verifier checks a struct vector's 4-byte alignment only; ConstantSegment needs 8.
  if (p->constants() && p->constants()->size() != 0) {
    const auto m = reinterpret_cast<uintptr_t>(p->constants()->Data()) % alignof(fb::ConstantSegment);
    if (m != 0) return program_error("constants", -1, "address % 8", static_cast<int64_t>(m), "must be 0 (malformed file)");
  }
  if (p->constants())
    for (uint32_t i = 0; i < p->constants()->size(); ++i) {
      const fb::ConstantSegment* seg = p->constants()->Get(i);
      if (seg->offset() % kAlignment != 0)
        return program_error("constants", i, "offset", static_cast<int64_t>(seg->offset()), "must be a multiple of 16");
      if (seg->offset() > blob_size || seg->size() > blob_size - seg->offset())
        return program_error("constants", i, "size", static_cast<int64_t>(seg->size()), "segment must lie within constant_data");
    }
  for (int32_t t = 0; t < out.num_tensors_; ++t) CORTEXM_RETURN_IF_STATUS(check_tensor(*p, t, out.arena_size_));
  CORTEXM_RETURN_IF_STATUS(check_io(out, p->inputs(), "inputs"));
  CORTEXM_RETURN_IF_STATUS(check_io(out, p->outputs(), "outputs"));
  uint64_t op_state_size = uint64_t{kOpSlotBytes} * static_cast<uint64_t>(out.num_ops_);
  for (int32_t i = 0; i < out.num_ops_; ++i) {
    CORTEXM_RETURN_IF_STATUS(check_op(out, i, &out.extra_scratch_));
    const OpImpl& impl = out.op_impl(i);
    if (impl.float_fallback) ++out.float_ops_;
    if (impl.state) op_state_size += impl.state->bytes;
  }
  if (op_state_size > kMaxBytes)
    return program_error("program", -1, "ops.size", out.num_ops_, "is too large for the per-op state of this runtime");
  out.op_state_size_ = static_cast<size_t>(op_state_size);
  if (uint64_t{out.extra_scratch_offset()} + out.extra_scratch_ > kMaxBytes ||
      out.extra_scratch_offset() + out.extra_scratch_ < out.arena_size_)
    return program_error("program", -1, "arena_size", static_cast<int64_t>(out.arena_size_),
                         "is too large for the scratch this runtime's kernels add after it");
  CORTEXM_RETURN_IF_STATUS(check_writes_before_reads(out));
  CORTEXM_RETURN_IF_STATUS(check_bundled(out));
  *program = out;
  return kStatusOk;
}

Status Program::init_op_state(void* state, size_t bytes) {
  if (op_state_size_ > 0 && !state)
    return program_error("op_state", -1, "state", 0, "must not be null", -1, StatusCode::kInvalidArgument);
  if (reinterpret_cast<uintptr_t>(state) % kOpStateAlignment != 0)
    return program_error("op_state", -1, "state", static_cast<int64_t>(reinterpret_cast<uintptr_t>(state) % kOpStateAlignment),
                         "must be 8-byte aligned", -1, StatusCode::kInvalidArgument);
  if (bytes < op_state_size_)
    return program_error("op_state", -1, "bytes", static_cast<int64_t>(bytes),
                         "must be at least the program's op_state_size()", -1, StatusCode::kInvalidArgument);
  op_state_ = nullptr;  // the ops' inits read the program, not an earlier state
  auto* base = static_cast<uint8_t*>(state);
  size_t offset = size_t{kOpSlotBytes} * static_cast<size_t>(num_ops_);
  for (int32_t i = 0; i < num_ops_; ++i) {
    const OpImpl* impl = &op_impl(i);
    std::memcpy(base + size_t{kOpSlotBytes} * static_cast<size_t>(i), &impl, sizeof impl);
    if (!impl->state) continue;
    const OpContext ctx{*this, *program_->ops()->Get(i), i, nullptr};
    impl->state->init(ctx, base + offset);
    offset += impl->state->bytes;
  }
  op_state_ = base;
  return kStatusOk;
}

DataRef Program::data_ref(int32_t index) const {
  const fb::Tensor* t = program_->tensors()->Get(index);
  if (t->location() == fb::Location_Constant)
    return DataRef{static_cast<uint32_t>(program_->constants()->Get(t->constant())->offset()), DataRef::kConstant};
  return DataRef{static_cast<uint32_t>(t->offset()), DataRef::kArena};
}

const OpImpl& Program::op_impl(int32_t index) const { return *ops_->find(program_->ops()->Get(index)->kernel()); }

int32_t Program::num_inputs() const { return static_cast<int32_t>(program_->inputs()->size()); }
int32_t Program::num_outputs() const { return static_cast<int32_t>(program_->outputs()->size()); }
int32_t Program::input_tensor(int32_t i) const { return program_->inputs()->Get(i); }
int32_t Program::output_tensor(int32_t i) const { return program_->outputs()->Get(i); }

TensorView Program::tensor(int32_t index, uint8_t* arena) const {
  const fb::Tensor* t = program_->tensors()->Get(index);
  TensorView v;
  v.dtype = static_cast<DType>(t->dtype());
  v.rank = t->shape() ? static_cast<int32_t>(t->shape()->size()) : 0;
  for (int32_t d = 0; d < v.rank; ++d) v.shape[d] = t->shape()->Get(d);
  const bool ordered = t->dim_order() && t->dim_order()->size() != 0;
  strides_for(v.shape, v.rank, ordered ? t->dim_order()->data() : nullptr, v.strides);
  if (t->location() == fb::Location_Constant) {
    const fb::ConstantSegment* seg = program_->constants()->Get(t->constant());
    v.data = const_cast<uint8_t*>(constant_data_ + seg->offset());
  } else if (arena) {
    v.data = arena + t->offset();
  }
  return v;
}

}  // namespace cortexm::runtime

namespace cortexm::runtime {

void Program::dim_order(int32_t index, int32_t* order) const {
  const fb::Tensor* t = program_->tensors()->Get(index);
  const int32_t rank = t->shape() ? static_cast<int32_t>(t->shape()->size()) : 0;
  const bool ordered = t->dim_order() && t->dim_order()->size() != 0;
  for (int32_t k = 0; k < rank; ++k) order[k] = ordered ? t->dim_order()->Get(k) : k;
}

}  // namespace cortexm::runtime
