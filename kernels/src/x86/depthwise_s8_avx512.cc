// AVX-512 depthwise conv (x86/depthwise_block.h): 16 channels per step, VPMOVSXBD and VPDPWSSD
// (VPMULLD, VPADDD for the largest windows) on ZMM registers; the sums requantized 16 at a time (x86/requantize16.h). Built with -mavx512f -mavx512bw
// -mavx512vl (the AVX512-VNNI variant's CPUs have them).
#include "x86/depthwise_block.h"
#include "x86/depthwise_s8.h"
#include "x86/requantize16.h"

namespace cortexm::x86 {

namespace {

struct Avx512Channels {
  using Vec = __m512i;
  static constexpr int32_t kChannels = 16;

  static Vec splat(int32_t v) { return _mm512_set1_epi32(v); }
  static Vec load32(const int32_t* p) { return _mm512_loadu_si512(p); }
  static Vec widen(const int8_t* p) { return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static Vec add(Vec a, Vec b) { return _mm512_add_epi32(a, b); }
  static Vec multiply_add(Vec acc, Vec x, Vec w) { return _mm512_add_epi32(acc, _mm512_mullo_epi32(x, w)); }
  // A weight as the low half of its lane, the high half 0: dot() multiplies by it with VPDPWSSD.
  static Vec weight(const int8_t* p) { return _mm512_and_si512(widen(p), _mm512_set1_epi32(0xFFFF)); }
  // acc + x * w for x in int16 range and w from weight(), in place (as x86/gemm_s8_avx512vnni.cc).
  static Vec dot(Vec acc, Vec x, Vec w) {
    __asm__("vpdpwssd %2, %1, %0" : "+v"(acc) : "v"(x), "v"(w));
    return acc;
  }

  struct Requantize {
    Requantize16 lanes;
    Requantize(const ConvQuantParams& q, int32_t c)
        : lanes(_mm512_loadu_si512(q.multipliers + c), _mm512_loadu_si512(q.shifts + c), q.output_offset,
                q.activation_min, q.activation_max) {}
    void store(Vec acc, int8_t* out) const {  // in [-128, 127] already
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtsepi32_epi8(lanes(acc)));
    }
  };
};

}  // namespace

void depthwise_s8_avx512(const DepthwiseConv2dParams& p, const int8_t* input, const int8_t* filter,
                         const int32_t* bias, int8_t* output) {
  depthwise_s8<Avx512Channels>(p, input, filter, bias, output);
}

}  // namespace cortexm::x86
