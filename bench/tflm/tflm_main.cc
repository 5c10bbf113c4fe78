// TFLite Micro + CMSIS-NN running one .tflite once, as a TFLM user's firmware does: the model
// from flash, a MicroMutableOpResolver with exactly the model's ops (tflm_ops.h, generated), a
// static arena. Prints the outputs and TFLM's arena_used_bytes() after AllocateTensors
// (bench_common.h); cortexm_insn_marker() brackets Invoke() alone.
#include <cstring>

#include "bench_common.h"
#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tensorflow/lite/micro/micro_profiler_interface.h"
#include "tensorflow/lite/schema/schema_generated.h"
#include "tflm_ops.h"

extern "C" const unsigned char bench_model[];  // model_data.c (generated): the .tflite file

namespace {

alignas(16) uint8_t arena[TFLM_ARENA_BYTES];

#ifdef BENCH_PER_OP
// Brackets each op's Invoke with markers too (TFLM calls it only without TF_LITE_STRIP_ERROR_STRINGS).
class MarkerProfiler : public tflite::MicroProfilerInterface {
 public:
  uint32_t BeginEvent(const char*) override {
    cortexm_insn_marker();
    return 0;
  }
  void EndEvent(uint32_t) override { cortexm_insn_marker(); }
};
MarkerProfiler profiler;
tflite::MicroProfilerInterface* const bench_profiler = &profiler;
#else
tflite::MicroProfilerInterface* const bench_profiler = nullptr;
#endif

}  // namespace

int main() {
  const tflite::Model* model = tflite::GetModel(bench_model);
  if (model->version() != TFLITE_SCHEMA_VERSION) return bench::fail("the model's schema version is not TFLM's");
  tflite::MicroMutableOpResolver<BENCH_TFLM_NUM_OPS> resolver;
  if (!BENCH_TFLM_REGISTER_OPS(resolver)) return bench::fail("registering the ops");
  tflite::MicroInterpreter interpreter(model, resolver, arena, sizeof arena, nullptr, bench_profiler);
  if (interpreter.AllocateTensors() != kTfLiteOk) return bench::fail("AllocateTensors (TFLM_ARENA_BYTES too small?)");
  if (interpreter.inputs_size() != 1) return bench::fail("the bench runs models with one input");

  TfLiteTensor* input = interpreter.input(0);
  if (input->bytes != bench_input_bytes) return bench::fail("the input's size is not the model's");
  std::memcpy(input->data.raw, bench_input, bench_input_bytes);

  cortexm_insn_marker();
  const TfLiteStatus invoked = interpreter.Invoke();
  cortexm_insn_marker();
  if (invoked != kTfLiteOk) return bench::fail("Invoke");

  for (size_t i = 0; i < interpreter.outputs_size(); ++i) {
    const TfLiteTensor* output = interpreter.output(static_cast<int>(i));
    bench::print_output(static_cast<int>(i), output->data.raw, output->bytes);
  }
  bench::print_done(interpreter.arena_used_bytes());
  return 0;
}
