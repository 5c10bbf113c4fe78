// The cortexm program imported from the same .tflite (Program.export_c, named "model": the
// program in flash, model_ops() registering only its kernels, a static arena of the size the
// program needs), run once on the same input as tflm_main.cc. Prints the outputs and the
// program's arena size plus its per-op state (bench_common.h); cortexm_insn_marker() brackets runtime::execute alone.
#include "bench_common.h"
#include "cortexm/kernels/kernel_isa.h"
#include "model_program.h"
#include "runtime/op_resolver.h"
#include "runtime/program.h"

namespace {

using cortexm::runtime::Program;
using cortexm::runtime::Status;
using cortexm::runtime::TensorView;

// The scalar kernels' size when this build runs them, as export_c's main.cc.
constexpr size_t kArenaBytes = CORTEXM_BUILT_ISA == 0 ? MODEL_SCALAR_ARENA_SIZE : MODEL_ARENA_SIZE;
alignas(16) uint8_t arena[kArenaBytes > 0 ? kArenaBytes : 1];
// Each op's params decoded once (Program::init_op_state): counted with the arena, as TFLM's arena
// holds its per-op data.
alignas(16) uint8_t op_state[MODEL_OP_STATE_SIZE > 0 ? MODEL_OP_STATE_SIZE : 1];
alignas(16) uint8_t outputs[MODEL_OUTPUT_BYTES > 0 ? MODEL_OUTPUT_BYTES : 1];

// A view of contiguous bytes with the shape and dtype of `like` (arena tensors may be channels-last).
TensorView contiguous(const TensorView& like, const void* data) {
  TensorView view = like;
  view.data = static_cast<uint8_t*>(const_cast<void*>(data));  // only read when it is a copy's source
  cortexm::runtime::strides_for(view.shape, view.rank, nullptr, view.strides);
  return view;
}

}  // namespace

int main() {
  Program program;
  if (!Program::load(model_program, MODEL_PROGRAM_SIZE, &program, model_ops()).ok())
    return bench::fail("loading the program");
  if (!program.init_op_state(op_state, sizeof op_state).ok()) return bench::fail("decoding the ops' params");
  if (program.num_inputs() != 1) return bench::fail("the bench runs models with one input");
  const TensorView input = program.tensor(program.input_tensor(0), arena);
  if (input.nbytes() != bench_input_bytes) return bench::fail("the input's size is not the program's");
  cortexm::runtime::copy_logical(contiguous(input, bench_input), input);

  cortexm_insn_marker();
  const Status ran = cortexm::runtime::execute(program, arena, sizeof arena, nullptr, nullptr);
  cortexm_insn_marker();
  if (!ran.ok()) return bench::fail("execute");

  uint8_t* out = outputs;
  for (int32_t i = 0; i < program.num_outputs(); ++i) {
    const TensorView output = program.tensor(program.output_tensor(i), arena);
    cortexm::runtime::copy_logical(output, contiguous(output, out));
    bench::print_output(static_cast<int>(i), out, output.nbytes());
    out += output.nbytes();
  }
  bench::print_done(kArenaBytes + MODEL_OP_STATE_SIZE);
  return 0;
}
