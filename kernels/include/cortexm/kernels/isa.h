// The instruction sets the kernels have variants for; a program records the one its scratch was
// planned for, and each *_scratch_size(params, isa) answers for one of them.
#pragma once

#include <cstdint>

namespace cortexm {

enum class Isa : uint8_t { kScalar = 0, kDsp = 1, kMve = 2 };

// "SCALAR", "DSP", "MVE" (as targets and programs spell them).
constexpr const char* isa_name(Isa isa) {
  return isa == Isa::kMve ? "MVE" : isa == Isa::kDsp ? "DSP" : "SCALAR";
}

}  // namespace cortexm
