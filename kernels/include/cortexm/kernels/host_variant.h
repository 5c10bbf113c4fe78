// The x86-64 variants of the scalar kernels the host runs (the freestanding scalar build of every
// other core ignores this): chosen at run time from what the CPU reports, and settable so that
// tests can run each variant the CPU has. Every variant gives the scalar kernels' bytes.
#pragma once

#include <cstdint>

namespace cortexm {

enum class HostVariant : uint8_t {
  kScalar = 0,      // the portable C++ kernels (SSE2 on x86-64)
  kAvx2 = 1,        // 256-bit int16 multiply-adds (VPMADDWD)
  kAvx512Vnni = 2,  // 512-bit int16 dot products (VPDPWSSD, AVX512-VNNI + BW + VL)
};

// "scalar", "avx2", "avx512vnni".
constexpr const char* host_variant_name(HostVariant v) {
  return v == HostVariant::kAvx512Vnni ? "avx512vnni" : v == HostVariant::kAvx2 ? "avx2" : "scalar";
}

// The richest variant this CPU (and this build) can run; kScalar off x86-64.
HostVariant best_host_variant();

// The variant the kernels use: best_host_variant() until set_host_variant picks another.
HostVariant host_variant();

// False (and no change) when the CPU or build cannot run `variant`.
bool set_host_variant(HostVariant variant);

}  // namespace cortexm
