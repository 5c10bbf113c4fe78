// The x86-64 variants of the scalar kernels the host runs (the freestanding scalar build of every
// other core ignores this): chosen at run time from what the CPU reports, and settable so that
// tests can run each variant the CPU has. Every variant gives the scalar kernels' bytes.
// A run (runtime::execute, the graph interpreter, Program.run) reads the variant once and hands it
// to each kernel in its params (host_variant field), so set_host_variant from another thread never
// changes a kernel's choice halfway, nor pairs weights packed for one variant with another's code.
#pragma once

#include <cstdint>
#include <type_traits>

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

// A kernel params' host_variant when the caller picks none: the kernel reads host_variant() once
// when it starts (a direct kernel call is a run of its own).
constexpr HostVariant kHostVariantInUse = static_cast<HostVariant>(0xff);

// The variant a kernel with params' host_variant `requested` runs: host_variant() for
// kHostVariantInUse, else `requested` capped at best_host_variant() (never code the CPU lacks).
HostVariant resolve_host_variant(HostVariant requested);

// Kernel params P that take a host_variant (the kernels with x86 variants); a run sets it on these.
template <class P, class = void>
struct TakesHostVariant : std::false_type {};
template <class P>
struct TakesHostVariant<P, std::void_t<decltype(P::host_variant)>> : std::true_type {};

}  // namespace cortexm
