// The QEMU runner: reads a program file and its inputs through semihosting, runs the program with
// the cortexm runtime and writes the outputs back.
//
//   command line (-semihosting-config arg=...): runner PROGRAM INPUTS OUTPUTS [per-op]
//
// INPUTS holds one or more cases, each the program's inputs in order as contiguous bytes of their
// logical shapes (numpy's C order) without padding; the program runs once per case and OUTPUTS
// receives each case's outputs the same way, case after case. The program, its arena and one
// case's input and output bytes are placed one after the other (16-byte aligned) in the machine's
// bulk RAM (BULK in the linker script). cortexm_insn_marker() brackets each run (and each op with
// per-op) so an instruction-counting QEMU plugin can attribute counts.
//
// Exit codes: 0 ok, 1 bad command line or host file, 2 does not fit the machine's memory,
// 3 fault (startup.c), 4 the runtime rejected the program or its inputs.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "runtime/program.h"
#include "semihosting.h"

extern "C" uint8_t __bulk_start[], __bulk_end[];

// The instruction-count plugin records its counter whenever this function is entered.
extern "C" __attribute__((noinline, used)) void cortexm_insn_marker(void) { __asm__ volatile(""); }

namespace {

using cortexm::runtime::Program;
using cortexm::runtime::Status;
using cortexm::runtime::TensorView;

enum ExitCode { kOk = 0, kHostFile = 1, kTooBig = 2, kInvalid = 4 };

constexpr int kMaxArgs = 8;

size_t align_up(size_t n) { return (n + cortexm::runtime::kAlignment - 1) & ~(cortexm::runtime::kAlignment - 1); }

int fail(int code, const char* what) {
  sh_write0("runner: error: ");
  sh_write0(what);
  sh_write0("\n");
  return code;
}

// Splits the semihosting command line in place at spaces.
int split_args(char* line, char** args) {
  int n = 0;
  for (char* p = line; *p && n < kMaxArgs;) {
    while (*p == ' ') *p++ = '\0';
    if (!*p) break;
    args[n++] = p;
    while (*p && *p != ' ') ++p;
  }
  return n;
}

int fail_status(const Status& st) {
  sh_write0("runner: error: the runtime rejected the program: ");
  sh_write0(st.section ? st.section : "?");
  sh_print_int(" index ", st.section_index);
  if (st.detail.argument) {
    sh_write0("  ");
    sh_write0(st.detail.argument);
    sh_print_int(" = ", st.detail.value);
    if (st.detail.requirement) {
      sh_write0("  ");
      sh_write0(st.detail.requirement);
      sh_write0("\n");
    }
  }
  return kInvalid;
}

// Memory needs more bytes than the machine's bulk RAM has: say how many of each.
int fail_too_big(const char* what, size_t needed, size_t available) {
  sh_write0("runner: error: does not fit the machine's memory: ");
  sh_write0(what);
  sh_print_int(" needs bytes: ", static_cast<int64_t>(needed));
  sh_print_int("runner: bulk RAM bytes: ", static_cast<int64_t>(available));
  return kTooBig;
}

TensorView contiguous_view(const TensorView& like, uint8_t* data) {
  TensorView v = like;
  v.data = data;
  cortexm::runtime::strides_for(v.shape, v.rank, nullptr, v.strides);
  return v;
}

void marker_hook(void*, int32_t, uint8_t, bool) { cortexm_insn_marker(); }

int run(int argc, char** argv) {
  if (argc < 4) return fail(kHostFile, "usage: runner PROGRAM INPUTS OUTPUTS [per-op]");
  const bool per_op = argc > 4 && std::strcmp(argv[4], "per-op") == 0;
  uint8_t* const bulk = __bulk_start;
  const size_t bulk_size = static_cast<size_t>(__bulk_end - __bulk_start);

  const int program_file = sh_open(argv[1], SH_OPEN_READ_BINARY);
  if (program_file < 0) return fail(kHostFile, "cannot open the program file");
  const long program_size = sh_flen(program_file);
  if (program_size < 0) return fail(kHostFile, "cannot read the program file's length");
  if (static_cast<size_t>(program_size) > bulk_size)
    return fail_too_big("the program file", static_cast<size_t>(program_size), bulk_size);
  if (sh_read(program_file, bulk, static_cast<size_t>(program_size)) != 0)
    return fail(kHostFile, "cannot read the program file");
  sh_close(program_file);

  Program program;
  const Status loaded = Program::load(bulk, static_cast<size_t>(program_size), &program);
  if (!loaded.ok()) return fail_status(loaded);

  // Each op's params decoded once (Program::init_op_state), then the arena, the input bytes and the
  // output bytes.
  size_t input_bytes = 0, output_bytes = 0;
  for (int32_t i = 0; i < program.num_inputs(); ++i)
    input_bytes += program.tensor(program.input_tensor(i), nullptr).nbytes();
  for (int32_t i = 0; i < program.num_outputs(); ++i)
    output_bytes += program.tensor(program.output_tensor(i), nullptr).nbytes();
  const size_t state_offset = align_up(static_cast<size_t>(program_size));
  const size_t arena_offset = align_up(state_offset + program.op_state_size());
  const size_t inputs_offset = align_up(arena_offset + program.required_arena_size());
  const size_t outputs_offset = align_up(inputs_offset + input_bytes);
  const size_t needed = outputs_offset + output_bytes;
  if (needed > bulk_size) return fail_too_big("program, arena, inputs and outputs", needed, bulk_size);
  uint8_t* const arena = bulk + arena_offset;
  const Status bound = program.init_op_state(bulk + state_offset, program.op_state_size());
  if (!bound.ok()) return fail_status(bound);

  const int input_file = sh_open(argv[2], SH_OPEN_READ_BINARY);
  if (input_file < 0) return fail(kHostFile, "cannot open the inputs file");
  const long inputs_size = sh_flen(input_file);
  if (inputs_size < 0 || (input_bytes == 0 ? inputs_size != 0
                                            : inputs_size == 0 || inputs_size % static_cast<long>(input_bytes) != 0)) {
    sh_print_int("runner: the program's inputs take bytes: ", static_cast<int64_t>(input_bytes));
    return fail(kHostFile, "the inputs file is not a whole number of cases");
  }
  const long cases = input_bytes == 0 ? 1 : inputs_size / static_cast<long>(input_bytes);
  const int output_file = sh_open(argv[3], SH_OPEN_WRITE_BINARY);
  if (output_file < 0) return fail(kHostFile, "cannot create the outputs file");

  cortexm::runtime::Profiler profiler;
  profiler.hook = marker_hook;
  cortexm::runtime::RunStats stats;
  for (long c = 0; c < cases; ++c) {
    if (sh_read(input_file, bulk + inputs_offset, input_bytes) != 0) return fail(kHostFile, "cannot read the inputs file");
    uint8_t* in = bulk + inputs_offset;
    // Every case's inputs into the arena before its run: a run may write over its inputs.
    for (int32_t i = 0; i < program.num_inputs(); ++i) {
      const TensorView dst = program.tensor(program.input_tensor(i), arena);
      cortexm::runtime::copy_logical(contiguous_view(dst, in), dst);
      in += dst.nbytes();
    }

    cortexm_insn_marker();
    const Status ran = cortexm::runtime::execute(program, arena, program.required_arena_size(),
                                                 per_op ? &profiler : nullptr, &stats);
    cortexm_insn_marker();
    if (!ran.ok()) return fail_status(ran);

    uint8_t* out = bulk + outputs_offset;
    for (int32_t i = 0; i < program.num_outputs(); ++i) {
      const TensorView src = program.tensor(program.output_tensor(i), arena);
      cortexm::runtime::copy_logical(src, contiguous_view(src, out));
      out += src.nbytes();
    }
    if (sh_write(output_file, bulk + outputs_offset, output_bytes) != 0) return fail(kHostFile, "cannot write the outputs file");
  }
  sh_close(input_file);
  sh_close(output_file);
  sh_print_int("runner: cases run: ", cases);
  sh_print_int("runner: ok, ops run: ", stats.ops);
  return kOk;
}

}  // namespace

int main() {
  static char line[512];
  if (sh_get_cmdline(line, sizeof line) != 0) return fail(kHostFile, "no semihosting command line");
  char* args[kMaxArgs] = {};
  return run(split_args(line, args), args);
}
