// Target driver of the kernel-variant checks for the QEMU machines: the semihosting command line is
// "kernel_variants [seed] [cases]"; the exit code is 0 when every case matched, 1 otherwise.
#include <cstdint>

#include "kernel_variants.h"
#include "semihosting.h"

namespace {

uint32_t parse(const char* s, uint32_t fallback) {
  if (!s || *s < '0' || *s > '9') return fallback;
  uint32_t v = 0;
  while (*s >= '0' && *s <= '9') v = v * 10 + static_cast<uint32_t>(*s++ - '0');
  return v;
}

}  // namespace

int main() {
  char line[128] = {};
  const char* args[3] = {nullptr, nullptr, nullptr};
  if (sh_get_cmdline(line, sizeof line) == 0) {
    int n = 0;
    for (char* p = line; *p && n < 3;) {
      while (*p == ' ') *p++ = '\0';
      if (!*p) break;
      args[n++] = p;
      while (*p && *p != ' ') ++p;
    }
  }
  const uint32_t seed = parse(args[1], 1u);
  const int32_t cases = static_cast<int32_t>(parse(args[2], 200u));
  const int failures = cortexm::variant_tests::run_all(seed, cases, [](const char* text) {
    sh_write0(text);
    sh_write0("\n");
  });
  return failures == 0 ? 0 : 1;
}
