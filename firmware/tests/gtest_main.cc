// main for GoogleTest suites on the target: the semihosting command line (QEMU's
// -semihosting-config arg=...) becomes argv, so --gtest_filter and friends work as on the host.
#include <gtest/gtest.h>

#include "semihosting.h"

int main() {
  static char line[1024];
  static char* argv[32];
  int argc = 0;
  argv[argc++] = const_cast<char*>("tests");
  if (sh_get_cmdline(line, sizeof line) == 0) {
    for (char* p = line; *p && argc < 31;) {
      while (*p == ' ') *p++ = '\0';
      if (!*p) break;
      argv[argc++] = p;
      while (*p && *p != ' ') ++p;
    }
    // QEMU passes the program name first; skip it when given.
    if (argc > 1 && argv[1][0] != '-') {
      for (int i = 1; i + 1 < argc; ++i) argv[i] = argv[i + 1];
      --argc;
    }
  }
  argv[argc] = nullptr;
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
