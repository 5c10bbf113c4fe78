// AVX512-VNNI variant of the int8 matrix product (x86/gemm_s8.h): 32 taps per step widened to
// int16 (VPMOVSXBW) and accumulated pairwise into int32 lanes by VPDPWSSD (exact, wrapping, no
// saturation); the last taps come in through a masked load. Blocks of 4 rows by 4 weight rows, 16
// accumulators + 4 rows + 1 weight vector of the 32 ZMM registers. Built with -mavx512f
// -mavx512bw -mavx512vl -mavx512vnni; run only when the CPU has them.
#include "x86/gemm_block.h"

namespace cortexm::x86 {

namespace {

struct Avx512VnniLanes {
  using Vec = __m512i;
  static constexpr int kTaps = 32;
  static constexpr int kRows = 4;

  static Vec zero() { return _mm512_setzero_si512(); }
  static Vec widen(const int8_t* p) { return _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  static constexpr bool kMaskedSteps = true;  // a masked load reads only the taps
  static Vec widen(const int8_t* p, int32_t taps) {  // the first `taps` (1 to 32), zeros after them
    const __mmask32 lanes = static_cast<__mmask32>((uint64_t{1} << taps) - 1);
    return _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(lanes, p));
  }
  // GCC 12 gives _mm512_dpwssd_epi32 a separate destination and copies every accumulator (and
  // spills some) each step; this form updates it in place.
  static Vec dot(Vec acc, Vec x, Vec w) {
    __asm__("vpdpwssd %2, %1, %0" : "+v"(acc) : "v"(x), "v"(w));
    return acc;
  }
  static __m256i fold(Vec v) { return _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1)); }
  // The lane sums of v0..v3 (each wrapping modulo 2^32).
  static __m128i sum4(Vec v0, Vec v1, Vec v2, Vec v3) {
    const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(fold(v0), fold(v1)), _mm256_hadd_epi32(fold(v2), fold(v3)));
    return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
  }
};

}  // namespace

void gemm_s8_avx512vnni(const GemmS8& g) { Gemm<Avx512VnniLanes>::run(g); }

}  // namespace cortexm::x86
