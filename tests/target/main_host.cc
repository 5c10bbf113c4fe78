// Host driver of the kernel-variant checks: kernel_variants [seed] [cases] [host variant]. The host
// variant (scalar, avx2, avx512vnni) makes the scalar kernels run that x86 variant; a CPU without
// it skips the run (exit code 77).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cortexm/kernels/host_variant.h"
#include "kernel_variants.h"

int main(int argc, char** argv) {
  const uint32_t seed = argc > 1 ? static_cast<uint32_t>(std::strtoul(argv[1], nullptr, 10)) : 1u;
  const int32_t cases = argc > 2 ? std::atoi(argv[2]) : 300;
  if (argc > 3) {
    int variant = 0;
    while (variant <= 2 && std::strcmp(argv[3], cortexm::host_variant_name(static_cast<cortexm::HostVariant>(variant))))
      ++variant;
    if (variant > 2) {
      std::printf("unknown host variant %s: scalar, avx2 or avx512vnni\n", argv[3]);
      return 2;
    }
    if (!cortexm::set_host_variant(static_cast<cortexm::HostVariant>(variant))) {
      std::printf("skipped: this CPU has no %s\n", argv[3]);
      return 77;
    }
  }
  std::printf("host variant: %s\n", cortexm::host_variant_name(cortexm::host_variant()));
  const int failures = cortexm::variant_tests::run_all(seed, cases, [](const char* text) {
    std::puts(text);
  });
  return failures == 0 ? 0 : 1;
}
