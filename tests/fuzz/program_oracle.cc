// Loads and runs program files one at a time, each in a child process with a time limit, and prints
// one line per file: `refused`, `ran`, `skipped` (its arena is over --max-arena), `crash <signal>`,
// `hang` or `arena_dependent <op>` (arena_oracle.h: the op whose outputs, or num_ops for the
// program's outputs, differ between two runs on differently pre-filled arenas).
//
//   program_oracle [--timeout S] [--max-arena BYTES] FILE...   the files named
//   program_oracle [--timeout S] [--max-arena BYTES]           records on stdin: uint32 size, bytes
//
// tests/fuzz/mutate_programs.py streams its mutants through the second form.
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <new>
#include <string>
#include <vector>

#include "arena_oracle.h"

#if defined(__SANITIZE_ADDRESS__)
#define CORTEXM_ORACLE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CORTEXM_ORACLE_ASAN 1
#endif
#endif
#ifndef CORTEXM_ORACLE_ASAN
#define CORTEXM_ORACLE_ASAN 0
#endif

namespace {

enum Outcome : int { kRan = 0, kRefused = 3, kSkipped = 4, kArenaDependent = 5 };

// The child: load, and when the program loads and its arena is small enough, the oracle.
// `op` (shared with the parent) receives the op of an arena dependence.
int examine(const std::vector<uint8_t>& bytes, size_t max_arena, int32_t* op) {
  const size_t size = bytes.size();
  auto* data = static_cast<uint8_t*>(::operator new(size ? size : 1, std::align_val_t(cortexm::runtime::kAlignment)));
  if (size) std::memcpy(data, bytes.data(), size);
  cortexm::runtime::Program program;
  if (!cortexm::runtime::Program::load(data, size, &program).ok()) return kRefused;
  if (program.required_arena_size() > max_arena) return kSkipped;
  *op = cortexm::fuzz::first_arena_dependence(program);
  return *op < 0 ? kRan : kArenaDependent;
}

std::string check(const std::vector<uint8_t>& bytes, unsigned timeout, size_t max_arena, int32_t* shared_op) {
  *shared_op = -1;
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    std::exit(2);
  }
  if (pid == 0) {
#if !CORTEXM_ORACLE_ASAN
    // Two arenas, the file and the kernels' own (ASan reserves more address space than this).
    const rlim_t memory = max_arena * 4 + (rlim_t{1} << 30);
    const rlimit limit{memory, memory};
    setrlimit(RLIMIT_AS, &limit);
#endif
    alarm(timeout);  // SIGALRM ends a run that takes longer
    _exit(examine(bytes, max_arena, shared_op));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (WIFSIGNALED(status))
    return WTERMSIG(status) == SIGALRM ? "hang" : "crash " + std::to_string(WTERMSIG(status));
  switch (WEXITSTATUS(status)) {
    case kRan: return "ran";
    case kRefused: return "refused";
    case kSkipped: return "skipped";
    case kArenaDependent: return "arena_dependent " + std::to_string(*shared_op);
    default: return "crash exit " + std::to_string(WEXITSTATUS(status));
  }
}

bool read_record(std::vector<uint8_t>* bytes) {
  uint32_t size = 0;
  if (std::fread(&size, sizeof(size), 1, stdin) != 1) return false;
  bytes->resize(size);
  return size == 0 || std::fread(bytes->data(), 1, size, stdin) == size;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned timeout = 10;
  size_t max_arena = size_t{64} << 20;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--timeout" && i + 1 < argc) timeout = static_cast<unsigned>(std::stoul(argv[++i]));
    else if (arg == "--max-arena" && i + 1 < argc) max_arena = std::stoull(argv[++i]);
    else if (arg.rfind("--", 0) == 0) {
      std::fprintf(stderr, "usage: %s [--timeout S] [--max-arena BYTES] [FILE...]\n", argv[0]);
      return 2;
    } else files.push_back(arg);
  }
  // The op of an arena dependence, written by the child.
  auto* shared_op = static_cast<int32_t*>(
      mmap(nullptr, sizeof(int32_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (shared_op == MAP_FAILED) {
    std::perror("mmap");
    return 2;
  }
  std::vector<uint8_t> bytes;
  if (!files.empty()) {
    for (const std::string& f : files) {
      std::ifstream in(f, std::ios::binary);
      if (!in) {
        std::fprintf(stderr, "%s: cannot read\n", f.c_str());
        return 2;
      }
      bytes.assign(std::istreambuf_iterator<char>(in), {});
      std::printf("%s %s\n", check(bytes, timeout, max_arena, shared_op).c_str(), f.c_str());
    }
    return 0;
  }
  while (read_record(&bytes)) {
    std::printf("%s\n", check(bytes, timeout, max_arena, shared_op).c_str());
    std::fflush(stdout);
  }
  return 0;
}
