// libFuzzer target: Program::load on arbitrary bytes and, when a program loads, one run of it.
// The loader's promise is that a program it accepts runs inside its buffers, so ASan + UBSan must
// stay silent for every input. The custom mutator keeps the size prefix right, and writes
// boundary values over scalars in place, so most mutants get past the FlatBuffers verifier and
// reach the field checks and the kernels' prepare steps.
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <new>

#include "runtime/program.h"

namespace {

using cortexm::runtime::Program;

constexpr size_t kMaxArena = size_t{64} << 20;  // larger arenas load but are not run

struct AlignedBytes {
  explicit AlignedBytes(size_t n)
      : data(static_cast<uint8_t*>(::operator new(n ? n : 1, std::align_val_t(cortexm::runtime::kAlignment)))) {}
  ~AlignedBytes() { ::operator delete(data, std::align_val_t(cortexm::runtime::kAlignment)); }
  AlignedBytes(const AlignedBytes&) = delete;
  AlignedBytes& operator=(const AlignedBytes&) = delete;
  uint8_t* data;
};

template <typename T>
void put(uint8_t* at, T value) {
  std::memcpy(at, &value, sizeof(value));
}

// Overwrites one naturally aligned scalar with a value at or across a boundary.
void write_boundary_value(uint8_t* data, size_t size, uint32_t seed) {
  static const int64_t kInts[] = {0, 1, -1, 2, 7, 8, 16, 127, -128, 255, 32767, -32768, 65536,
                                  std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(),
                                  std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                                  int64_t{1} << 32, int64_t{1} << 61};
  static const double kDoubles[] = {0.0, -1.0, 1e-300, 1e300, -1e300,
                                    std::numeric_limits<double>::quiet_NaN(),
                                    std::numeric_limits<double>::infinity(),
                                    -std::numeric_limits<double>::infinity(),
                                    std::numeric_limits<double>::denorm_min()};
  const uint32_t width = 1u << (seed % 4);  // 1, 2, 4 or 8 bytes
  if (size < 4 + width) return;
  const size_t slots = (size - 4) / width;
  uint8_t* at = data + 4 + (seed / 4 % slots) * width;  // never the size prefix
  const uint32_t pick = seed / 7;
  if (width == 8 && pick % 3 == 0) {
    put(at, kDoubles[pick / 3 % (sizeof(kDoubles) / sizeof(kDoubles[0]))]);
    return;
  }
  const int64_t v = kInts[pick % (sizeof(kInts) / sizeof(kInts[0]))];
  switch (width) {
    case 1: put(at, static_cast<int8_t>(v)); break;
    case 2: put(at, static_cast<int16_t>(v)); break;
    case 4: put(at, static_cast<int32_t>(v)); break;
    default: put(at, v); break;
  }
}

}  // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  if (seed % 2 == 0 && size >= 12) {
    write_boundary_value(data, size, seed / 2);
  } else {
    size = LLVMFuzzerMutate(data, size, max_size);
  }
  if (size >= 4 && seed % 16 != 1) put(data, static_cast<uint32_t>(size - 4));  // mostly a valid prefix
  return size;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  AlignedBytes bytes(size);
  if (size) std::memcpy(bytes.data, data, size);
  Program program;
  if (!Program::load(bytes.data, size, &program).ok()) return 0;
  if (program.arena_size() > kMaxArena) return 0;
  AlignedBytes arena(program.arena_size());
  for (size_t i = 0; i < program.arena_size(); ++i) arena.data[i] = static_cast<uint8_t>(i * 37 + 11);
  cortexm::runtime::execute(program, arena.data, program.arena_size());
  return 0;
}
