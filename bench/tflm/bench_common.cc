#include "bench_common.h"

#include "semihosting.h"

extern "C" __attribute__((noinline, used)) void cortexm_insn_marker(void) { __asm__ volatile(""); }

namespace bench {

void print_output(int index, const void* data, size_t size) {
  static const char digits[] = "0123456789abcdef";
  char chunk[2 * 64 + 1];
  sh_print_int("output ", index);
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  for (size_t done = 0; done < size;) {
    size_t n = 0;
    for (; n < 64 && done < size; ++n, ++done) {
      chunk[2 * n] = digits[bytes[done] >> 4];
      chunk[2 * n + 1] = digits[bytes[done] & 15];
    }
    chunk[2 * n] = '\0';
    sh_write0(chunk);
  }
  sh_write0("\n");
}

void print_done(size_t arena_bytes) {
  sh_print_int("arena ", static_cast<int64_t>(arena_bytes));
  sh_write0("ok\n");
}

int fail(const char* what) {
  sh_write0("bench: error: ");
  sh_write0(what);
  sh_write0("\n");
  return 1;
}

}  // namespace bench
