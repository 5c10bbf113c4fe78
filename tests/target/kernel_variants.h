// Randomized checks that this build's conv, depthwise, linear, add, mul and average-pool kernels (int8, and the
// int16 conv, add and mul; the variant kKernelIsa selects) are bit-identical with their plain-loop
// references. Freestanding (static buffers, no heap, no stdio): the same cases run on the host and
// on QEMU Cortex-M machines.
#pragma once

#include <cstdint>

namespace cortexm::variant_tests {

using Print = void (*)(const char* text);

// Runs `cases` random cases per kernel from `seed`; prints one line per kernel and one per
// failure; returns the number of failed cases.
int run_all(uint32_t seed, int32_t cases, Print print);

}  // namespace cortexm::variant_tests
