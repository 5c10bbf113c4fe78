// The uninitialized-read oracle of the fuzz harness and of tests/fuzz/program_oracle.cc: a loaded
// program runs twice, on arenas pre-filled with two different byte patterns, with the same inputs.
// Since the loader proves that every byte an op reads was written before it in the same run, every
// op's outputs and the program's outputs must come out the same; a difference is a finding (an op
// read bytes nothing wrote, or a kernel left part of an output unwritten).
#pragma once

#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

#include "program/program_generated.h"
#include "runtime/program.h"

namespace cortexm::fuzz {

struct ArenaRun {
  std::vector<uint64_t> op_outputs;  // per op, after it ran: a hash of each of its outputs
  std::vector<uint64_t> outputs;     // a hash of each program output after the run
};

inline uint64_t fnv1a(const uint8_t* data, size_t size) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

inline uint64_t tensor_hash(const runtime::Program& program, int32_t tensor, uint8_t* arena) {
  const runtime::TensorView v = program.tensor(tensor, arena);
  return fnv1a(v.data, v.nbytes());
}

// One run on a fresh arena whose bytes are `pattern` ^ (a fixed function of the address), with
// the same inputs whatever the pattern; the arena is program.required_arena_size() bytes.
inline ArenaRun run_on_pattern(const runtime::Program& program, uint8_t pattern) {
  const size_t size = program.required_arena_size();
  auto* arena = static_cast<uint8_t*>(::operator new(size ? size : 1, std::align_val_t(runtime::kAlignment)));
  for (size_t i = 0; i < size; ++i) arena[i] = static_cast<uint8_t>((i * 37 + 11) ^ pattern);
  for (int32_t i = 0; i < program.num_inputs(); ++i) {
    const runtime::TensorView in = program.tensor(program.input_tensor(i), arena);
    for (size_t b = 0; b < in.nbytes(); ++b) in.data[b] = static_cast<uint8_t>(b * 131 + i * 17 + 3);
  }
  struct Context {
    const runtime::Program* program;
    uint8_t* arena;
    ArenaRun run;
  } context{&program, arena, {}};
  runtime::Profiler profiler;
  profiler.context = &context;
  profiler.hook = [](void* c, int32_t op_index, uint8_t, bool after) {
    if (!after) return;
    auto* ctx = static_cast<Context*>(c);
    const auto* outs = ctx->program->fb().ops()->Get(op_index)->outputs();
    for (uint32_t o = 0; o < outs->size(); ++o)
      ctx->run.op_outputs.push_back(tensor_hash(*ctx->program, outs->Get(o), ctx->arena));
  };
  runtime::execute(program, arena, size, &profiler);
  for (int32_t i = 0; i < program.num_outputs(); ++i)
    context.run.outputs.push_back(tensor_hash(program, program.output_tensor(i), arena));
  ::operator delete(arena, std::align_val_t(runtime::kAlignment));
  return context.run;
}

// -1 when both runs agree; else the first op whose outputs differ, or num_ops() when only the
// program's outputs do.
inline int32_t first_arena_dependence(const runtime::Program& program) {
  const ArenaRun a = run_on_pattern(program, 0x00), b = run_on_pattern(program, 0xff);
  size_t at = 0;
  for (int32_t k = 0; k < program.num_ops(); ++k) {
    const uint32_t n = program.fb().ops()->Get(k)->outputs()->size();
    for (uint32_t o = 0; o < n; ++o, ++at)
      if (a.op_outputs[at] != b.op_outputs[at]) return k;
  }
  return a.outputs == b.outputs ? -1 : program.num_ops();
}

}  // namespace cortexm::fuzz
