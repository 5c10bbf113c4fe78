// Which x86-64 variant the host kernels run: the CPU's best unless set_host_variant says otherwise.
// Other builds have the scalar kernels only.
#include "cortexm/kernels/host_variant.h"

#include <atomic>

#if defined(CORTEXM_HOST_X86)
#include "cortexm/kernels/requantize.h"
#include "x86/gemm_s8.h"
#endif

namespace cortexm {

namespace {

HostVariant detect() {
#if defined(CORTEXM_HOST_X86)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl"))
    return HostVariant::kAvx512Vnni;
  if (__builtin_cpu_supports("avx2")) return HostVariant::kAvx2;
#endif
  return HostVariant::kScalar;
}

std::atomic<uint8_t>& chosen() {
  static std::atomic<uint8_t> variant{static_cast<uint8_t>(best_host_variant())};
  return variant;
}

}  // namespace

HostVariant best_host_variant() {
  static const HostVariant best = detect();
  return best;
}

HostVariant host_variant() { return static_cast<HostVariant>(chosen().load(std::memory_order_relaxed)); }

bool set_host_variant(HostVariant variant) {
  if (static_cast<uint8_t>(variant) > static_cast<uint8_t>(best_host_variant())) return false;
  chosen().store(static_cast<uint8_t>(variant), std::memory_order_relaxed);
  return true;
}

HostVariant resolve_host_variant(HostVariant requested) {
  if (requested == kHostVariantInUse) return host_variant();
  const HostVariant best = best_host_variant();
  return static_cast<uint8_t>(requested) > static_cast<uint8_t>(best) ? best : requested;
}

#if defined(CORTEXM_HOST_X86)
namespace x86 {

bool gemm_s8(const GemmS8& g, HostVariant variant) {
  switch (variant) {
    case HostVariant::kAvx512Vnni:
      gemm_s8_avx512vnni(g);
      return true;
    case HostVariant::kAvx2:
      gemm_s8_avx2(g);
      return true;
    case HostVariant::kScalar:
      break;
  }
  return false;
}

int8_t output_of(const GemmS8& g, int32_t n, uint32_t sum) {
  const int32_t c = g.per_channel ? n : 0;
  const uint32_t biased = sum + (g.bias ? static_cast<uint32_t>(g.bias[n]) : 0u);
  const int32_t scaled = static_cast<int32_t>(
      static_cast<uint32_t>(requantize(static_cast<int32_t>(biased), g.multipliers[c], g.shifts[c])) +
      static_cast<uint32_t>(g.output_offset));
  return static_cast<int8_t>(scaled < g.activation_min ? g.activation_min
                                                       : (scaled > g.activation_max ? g.activation_max : scaled));
}

uint32_t offset_term(const GemmS8& g, int32_t n) {
  if (g.offset == 0) return 0;
  const int8_t* row = g.w + int64_t{n} * g.depth;
  uint32_t sum = 0;
  for (int32_t k = 0; k < g.depth; ++k) sum += static_cast<uint32_t>(row[k]);
  return sum * static_cast<uint32_t>(g.offset);
}

}  // namespace x86
#endif

}  // namespace cortexm
