// What both firmwares of the side-by-side bench share (bench_common.cc): the input they run, the
// instruction marker around the inference, and the report they print over semihosting, which
// bench/tflm_bench.py reads:
//   output <index>
//   <the output's bytes in hex>
//   arena <bytes>
//   ok
#pragma once

#include <stddef.h>
#include <stdint.h>

extern "C" {
// input.c (generated): the bytes of the model's one input, the same in both firmwares.
extern const int8_t bench_input[];
extern const uint32_t bench_input_bytes;

// The instruction-count plugin (firmware/plugin/insn_count.c) records its running count whenever
// this is entered: the firmware calls it just before the inference and just after it.
void cortexm_insn_marker(void);
}

namespace bench {

// "output <index>", then the bytes in hex on one line.
void print_output(int index, const void* data, size_t size);
// "arena <bytes>", then "ok".
void print_done(size_t arena_bytes);
// "bench: error: <what>"; returns 1 (main's exit code).
int fail(const char* what);

}  // namespace bench
