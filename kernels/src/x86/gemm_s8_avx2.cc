// AVX2 variant of the int8 matrix product (x86/gemm_s8.h): 16 taps per step widened to int16
// (VPMOVSXBW) and multiplied pairwise into int32 lanes (VPMADDWD: exact, no saturation); blocks of
// 2 rows by 4 weight rows, 8 accumulators + 2 rows + 1 weight vector of the 16 YMM registers.
// Built with -mavx2; run only when the CPU has AVX2.
#include "x86/gemm_block.h"

namespace cortexm::x86 {

namespace {

struct Avx2Lanes {
  using Vec = __m256i;
  static constexpr int kTaps = 16;
  static constexpr int kRows = 2;

  static Vec zero() { return _mm256_setzero_si256(); }
  static Vec widen(const int8_t* p) { return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static constexpr bool kMaskedSteps = false;
  static Vec widen(const int8_t* p, int32_t taps) {  // the first `taps`, zeros after them (depth < 16)
    alignas(16) int8_t bytes[16] = {};
    std::memcpy(bytes, p, static_cast<size_t>(taps));
    return _mm256_cvtepi8_epi16(_mm_load_si128(reinterpret_cast<const __m128i*>(bytes)));
  }
  static Vec last(const int8_t* p, int32_t taps) {  // 16 taps, the first 16 - `taps` of them zeroed
    alignas(32) static constexpr int16_t kKeep[32] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                                       -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    return _mm256_and_si256(widen(p), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kKeep + taps)));
  }
  // The add in place: with _mm256_add_epi32, GCC 12 writes each sum to a new register, copies it
  // back and spills one accumulator every step.
  static Vec dot(Vec acc, Vec x, Vec w) {
    const Vec products = _mm256_madd_epi16(x, w);
    __asm__("vpaddd %1, %0, %0" : "+x"(acc) : "x"(products));
    return acc;
  }
  // The lane sums of v0..v3 (each wrapping modulo 2^32).
  static __m128i sum4(Vec v0, Vec v1, Vec v2, Vec v3) {
    const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(v0, v1), _mm256_hadd_epi32(v2, v3));
    return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
  }
};

}  // namespace

void gemm_s8_avx2(const GemmS8& g) { Gemm<Avx2Lanes>::run(g); }

}  // namespace cortexm::x86
