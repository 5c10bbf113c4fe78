// libFuzzer target: Program::load on arbitrary bytes and, when a program loads, one run of it.
// The loader's promise is that a program it accepts runs inside its buffers, so ASan + UBSan must
// stay silent for every input. The custom mutator is structure-aware: on a buffer that passes the
// FlatBuffers verifier it walks the tables with the schema's type tables and writes a boundary,
// nearby or random value into one scalar field or scalar vector element, which keeps the buffer
// valid, so the mutants reach the loader's field checks and the kernels' prepare steps. Other
// mutants are libFuzzer's byte-level ones with the size prefix kept right. Each loaded program runs
// twice (arena_oracle.h): its outputs must not depend on what the arena held before.
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <random>
#include <vector>

#include "arena_oracle.h"
#include "flatbuffers/minireflect.h"
#include "program_fuzz_generated.h"  // the program schema with type tables (namespace cortexm::fuzz_fb)
#include "runtime/program.h"

namespace {

using cortexm::runtime::Program;

// Larger arenas load but are not run (the zoo seeds need at most 50 KB; filling a mutant's
// 64 MB arena made each run slow).
constexpr size_t kMaxArena = size_t{1} << 20;

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

const int64_t kBoundaryInts[] = {0, 1, -1, 2, 3, 7, 8, 16, 127, -128, 255, 32767, -32768, 65535, 65536,
                                 std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(),
                                 std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                                 int64_t{1} << 31, int64_t{1} << 32, int64_t{1} << 61, int64_t{1} << 62};
const double kBoundaryDoubles[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1e-300, 1e300, -1e300, 1e-45, 3.4e38,
                                   std::numeric_limits<double>::quiet_NaN(),
                                   std::numeric_limits<double>::infinity(),
                                   -std::numeric_limits<double>::infinity(),
                                   std::numeric_limits<double>::denorm_min()};

template <typename T, size_t N>
constexpr size_t count_of(const T (&)[N]) {
  return N;
}

// Overwrites one naturally aligned scalar at any offset with a boundary value (may break the
// buffer's structure: the verifier must reject what it breaks).
void write_boundary_value(uint8_t* data, size_t size, uint32_t seed) {
  const uint32_t width = 1u << (seed % 4);  // 1, 2, 4 or 8 bytes
  if (size < 4 + width) return;
  const size_t slots = (size - 4) / width;
  uint8_t* at = data + 4 + (seed / 4 % slots) * width;  // never the size prefix
  const uint32_t pick = seed / 7;
  if (width == 8 && pick % 3 == 0) {
    put(at, kBoundaryDoubles[pick / 3 % count_of(kBoundaryDoubles)]);
    return;
  }
  const int64_t v = kBoundaryInts[pick % count_of(kBoundaryInts)];
  switch (width) {
    case 1: put(at, static_cast<int8_t>(v)); break;
    case 2: put(at, static_cast<int16_t>(v)); break;
    case 4: put(at, static_cast<int32_t>(v)); break;
    default: put(at, v); break;
  }
}

// A scalar field, or the scalar elements of a vector field, of a table or struct in the buffer.
struct ScalarSlot {
  uint8_t* at;  // the first element
  uint32_t count;
  flatbuffers::ElementaryType type;
};

bool is_scalar(flatbuffers::ElementaryType type) {
  return type != flatbuffers::ET_STRING && type != flatbuffers::ET_SEQUENCE;
}

void collect_struct(uint8_t* at, const flatbuffers::TypeTable* tt, std::vector<ScalarSlot>* slots) {
  for (size_t i = 0; i < tt->num_elems; ++i) {
    const auto type = static_cast<flatbuffers::ElementaryType>(tt->type_codes[i].base_type);
    uint8_t* field = at + tt->values[i];
    if (is_scalar(type)) {
      slots->push_back({field, 1, type});
    } else if (type == flatbuffers::ET_SEQUENCE) {
      collect_struct(field, tt->type_refs[tt->type_codes[i].sequence_ref](), slots);
    }
  }
}

// Every scalar slot reachable from `table` (of type `tt`). Only for verified buffers: offsets and
// union types are followed without bounds checks, as the verifier has checked them.
void collect_table(uint8_t* table, const flatbuffers::TypeTable* tt, std::vector<ScalarSlot>* slots) {
  const auto* t = reinterpret_cast<const flatbuffers::Table*>(table);
  for (size_t i = 0; i < tt->num_elems; ++i) {
    const flatbuffers::TypeCode code = tt->type_codes[i];
    const auto type = static_cast<flatbuffers::ElementaryType>(code.base_type);
    const flatbuffers::TypeTable* ref = code.sequence_ref >= 0 ? tt->type_refs[code.sequence_ref]() : nullptr;
    const auto field_offset = flatbuffers::FieldIndexToOffset(static_cast<flatbuffers::voffset_t>(i));
    uint8_t* at = const_cast<uint8_t*>(t->GetAddressOf(field_offset));
    if (!at) continue;
    if (code.is_repeating) {
      uint8_t* vec = at + flatbuffers::ReadScalar<flatbuffers::uoffset_t>(at);
      const auto n = flatbuffers::ReadScalar<flatbuffers::uoffset_t>(vec);
      uint8_t* elem = vec + sizeof(flatbuffers::uoffset_t);
      if (is_scalar(type)) {
        if (n) slots->push_back({elem, n, type});
        continue;
      }
      if (type != flatbuffers::ET_SEQUENCE) continue;  // strings
      for (flatbuffers::uoffset_t j = 0; j < n; ++j, elem += flatbuffers::InlineSize(type, ref)) {
        if (ref->st == flatbuffers::ST_TABLE) {
          collect_table(elem + flatbuffers::ReadScalar<flatbuffers::uoffset_t>(elem), ref, slots);
        } else if (ref->st == flatbuffers::ST_STRUCT) {
          collect_struct(elem, ref, slots);
        }
      }
    } else if (is_scalar(type)) {
      slots->push_back({at, 1, type});
    } else if (type == flatbuffers::ET_SEQUENCE && ref->st == flatbuffers::ST_STRUCT) {
      collect_struct(at, ref, slots);
    } else if (type == flatbuffers::ET_SEQUENCE) {
      const flatbuffers::TypeTable* member = ref;
      if (ref->st == flatbuffers::ST_UNION) {
        // A union's type is the field before it; the verifier checked the value as that type.
        const uint8_t* type_at = i ? t->GetAddressOf(flatbuffers::FieldIndexToOffset(
                                         static_cast<flatbuffers::voffset_t>(i - 1)))
                                   : nullptr;
        const uint8_t member_index = type_at ? *type_at : 0;
        if (member_index == 0 || member_index >= ref->num_elems) continue;
        const int16_t member_ref = ref->type_codes[member_index].sequence_ref;
        if (member_ref < 0) continue;
        member = ref->type_refs[member_ref]();
      }
      if (member->st == flatbuffers::ST_TABLE) collect_table(at + flatbuffers::ReadScalar<flatbuffers::uoffset_t>(at), member, slots);
    }
  }
}

template <typename T>
T read_as(const uint8_t* at) {
  T value;
  std::memcpy(&value, at, sizeof(value));
  return value;
}

// A new integer: a boundary value, the old one moved by -2..2, or random bits (the caller keeps
// the low bytes for narrower fields).
int64_t mutate_integer(int64_t old, std::minstd_rand& rng) {
  switch (rng() % 4) {
    case 0:
    case 1: return kBoundaryInts[rng() % count_of(kBoundaryInts)];
    case 2: return static_cast<int64_t>(static_cast<uint64_t>(old) + rng() % 5 - 2);
    default: return static_cast<int64_t>((uint64_t{rng()} << 32) ^ rng());
  }
}

double mutate_real(double old, std::minstd_rand& rng) {
  switch (rng() % 4) {
    case 0:
    case 1: return kBoundaryDoubles[rng() % count_of(kBoundaryDoubles)];
    case 2: return old * 2.0;
    default: return -old / 3.0;
  }
}

// Writes a new value over one element of one slot.
void mutate_slot(const ScalarSlot& slot, std::minstd_rand& rng) {
  const size_t width = flatbuffers::InlineSize(slot.type, nullptr);
  uint8_t* at = slot.at + (rng() % slot.count) * width;
  switch (slot.type) {
    case flatbuffers::ET_BOOL: put(at, static_cast<uint8_t>(!read_as<uint8_t>(at))); return;
    case flatbuffers::ET_FLOAT: put(at, static_cast<float>(mutate_real(read_as<float>(at), rng))); return;
    case flatbuffers::ET_DOUBLE: put(at, mutate_real(read_as<double>(at), rng)); return;
    default: break;
  }
  int64_t old = 0;
  switch (width) {
    case 1: old = read_as<int8_t>(at); break;
    case 2: old = read_as<int16_t>(at); break;
    case 4: old = read_as<int32_t>(at); break;
    default: old = read_as<int64_t>(at); break;
  }
  const int64_t v = mutate_integer(old, rng);
  switch (width) {
    case 1: put(at, static_cast<uint8_t>(v)); break;
    case 2: put(at, static_cast<uint16_t>(v)); break;
    case 4: put(at, static_cast<uint32_t>(v)); break;
    default: put(at, v); break;
  }
}

// Mutates 1 to 3 scalar fields of a program that passes the verifier, in place (the buffer stays
// valid); false when the bytes are not such a program.
bool mutate_fields(uint8_t* data, size_t size, unsigned int seed) {
  if (size < 8 || reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) != 0) return false;
  flatbuffers::Verifier verifier(data, size);
  if (!cortexm::fuzz_fb::VerifySizePrefixedProgramBuffer(verifier)) return false;
  std::vector<ScalarSlot> slots;
  uint8_t* root = data + sizeof(flatbuffers::uoffset_t);
  collect_table(root + flatbuffers::ReadScalar<flatbuffers::uoffset_t>(root),
                cortexm::fuzz_fb::ProgramTypeTable(), &slots);
  if (slots.empty()) return false;
  std::minstd_rand rng(seed);
  for (unsigned n = 1 + rng() % 3 / 2 + rng() % 3 / 2; n > 0; --n) mutate_slot(slots[rng() % slots.size()], rng);
  return true;
}

// Host variant mode (CORTEXM_FUZZ_HOST_VARIANTS=1; ctest program_fuzzer_host_variants_corpus): the
// program runs again on every x86 variant of the host kernels the CPU has, with its weights packed
// for that variant, from the same arena bytes; each run's outputs must equal the scalar run's.
void check_host_variants(const Program& program) {
  using cortexm::HostVariant;
  struct PackFree {
    void operator()(uint8_t* p) const { ::operator delete(p, std::align_val_t(64)); }
  };
  const size_t arena_bytes = program.required_arena_size();
  if (arena_bytes > kMaxArena) return;
  std::vector<uint8_t> scalar_outputs;
  for (int v = 0; v <= static_cast<int>(cortexm::best_host_variant()); ++v) {
    const auto variant = static_cast<HostVariant>(v);
    std::vector<std::unique_ptr<uint8_t, PackFree>> packings;  // 64-byte aligned, as the loader's
    std::vector<const void*> packed(static_cast<size_t>(program.num_ops()), nullptr);
    for (int32_t i = 0; i < program.num_ops(); ++i) {
      if (const size_t bytes = cortexm::runtime::host_pack(program, i, variant, nullptr)) {
        packings.emplace_back(static_cast<uint8_t*>(::operator new(bytes, std::align_val_t(64))));
        cortexm::runtime::host_pack(program, i, variant, packings.back().get());
        packed[static_cast<size_t>(i)] = packings.back().get();
      }
    }
    AlignedBytes arena(arena_bytes);
    for (size_t i = 0; i < arena_bytes; ++i) arena.data[i] = static_cast<uint8_t>(i * 37 + 11);
    const cortexm::runtime::HostKernels host{variant, packed.data()};
    if (!cortexm::runtime::execute(program, arena.data, arena_bytes, nullptr, nullptr, &host).ok()) return;
    std::vector<uint8_t> outputs;
    for (int32_t o = 0; o < program.num_outputs(); ++o) {
      const cortexm::runtime::TensorView t = program.tensor(program.output_tensor(o), arena.data);
      outputs.insert(outputs.end(), t.data, t.data + t.nbytes());
    }
    if (v == 0) {
      scalar_outputs = std::move(outputs);
    } else if (outputs != scalar_outputs) {
      std::fprintf(stderr, "host variant %s: outputs differ from the scalar kernels'\n", cortexm::host_variant_name(variant));
      std::abort();
    }
  }
}

// The ops' params decoded once (Program::init_op_state, into exactly op_state_size() bytes so ASan
// sees any write past them) must run as decoding them on every run does: same outputs from the
// same arena bytes.
void check_op_state(const Program& loaded) {
  const size_t arena_bytes = loaded.required_arena_size();
  std::vector<uint8_t> outputs[2];
  for (int bound = 0; bound < 2; ++bound) {
    Program program = loaded;
    AlignedBytes state(program.op_state_size());
    if (bound && !program.init_op_state(state.data, program.op_state_size()).ok()) {
      std::fprintf(stderr, "init_op_state refused a loaded program's state\n");
      std::abort();
    }
    AlignedBytes arena(arena_bytes);
    for (size_t i = 0; i < arena_bytes; ++i) arena.data[i] = static_cast<uint8_t>(i * 29 + 3);
    if (!cortexm::runtime::execute(program, arena.data, arena_bytes).ok()) return;
    for (int32_t o = 0; o < program.num_outputs(); ++o) {
      const cortexm::runtime::TensorView t = program.tensor(program.output_tensor(o), arena.data);
      outputs[bound].insert(outputs[bound].end(), t.data, t.data + t.nbytes());
    }
  }
  if (outputs[0] != outputs[1]) {
    std::fprintf(stderr, "outputs from init_op_state's state differ from decoding every run\n");
    std::abort();
  }
}

}  // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  switch (seed % 4) {
    case 0:
    case 1:
      if (mutate_fields(data, size, seed / 4)) return size;
      [[fallthrough]];
    case 2:
      if (size >= 12) {
        write_boundary_value(data, size, seed / 4);
        return size;
      }
      [[fallthrough]];
    default:
      size = LLVMFuzzerMutate(data, size, max_size);
      if (size >= 4 && seed % 64 != 3) put(data, static_cast<uint32_t>(size - 4));  // mostly a valid prefix
      return size;
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  AlignedBytes bytes(size);
  if (size) std::memcpy(bytes.data, data, size);
  Program program;
  if (!Program::load(bytes.data, size, &program).ok()) return 0;
  if (program.required_arena_size() > kMaxArena) return 0;
  // The uninitialized-read oracle: two runs on differently pre-filled arenas must agree.
  const int32_t op = cortexm::fuzz::first_arena_dependence(program);
  if (op >= 0) {
    std::fprintf(stderr, "op %d (num_ops: the program's outputs) depends on the arena's previous contents\n", op);
    std::abort();
  }
  check_op_state(program);
  static const bool host_variants = std::getenv("CORTEXM_FUZZ_HOST_VARIANTS") != nullptr;
  if (host_variants) check_host_variants(program);
  return 0;
}
