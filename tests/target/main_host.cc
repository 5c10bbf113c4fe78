// Host driver of the kernel-variant checks: kernel_variants [seed] [cases].
#include <cstdio>
#include <cstdlib>

#include "kernel_variants.h"

int main(int argc, char** argv) {
  const uint32_t seed = argc > 1 ? static_cast<uint32_t>(std::strtoul(argv[1], nullptr, 10)) : 1u;
  const int32_t cases = argc > 2 ? std::atoi(argv[2]) : 300;
  const int failures = cortexm::variant_tests::run_all(seed, cases, [](const char* text) {
    std::puts(text);
  });
  return failures == 0 ? 0 : 1;
}
