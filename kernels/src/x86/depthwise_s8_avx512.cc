// AVX-512 depthwise conv (x86/depthwise_block.h): 16 channels per step, VPMOVSXBD, VPMULLD, VPADDD
// on ZMM registers; the sums requantized as two halves of 8. Built with -mavx512f -mavx512bw
// -mavx512vl (the AVX512-VNNI variant's CPUs have them).
#include "x86/depthwise_block.h"
#include "x86/depthwise_s8.h"

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

  struct Requantize {
    Requantize8 low, high;
    Requantize(const ConvQuantParams& q, int32_t c)
        : low(q.multipliers + c, q.shifts + c, q.output_offset, q.activation_min, q.activation_max),
          high(q.multipliers + c + 8, q.shifts + c + 8, q.output_offset, q.activation_min, q.activation_max) {}
    void store(Vec acc, int8_t* out) const {
      const int64_t bytes[2] = {bytes_of(low(_mm512_castsi512_si256(acc))),
                                bytes_of(high(_mm512_extracti64x4_epi64(acc, 1)))};
      std::memcpy(out, bytes, 16);
    }
  };
};

}  // namespace

void depthwise_s8_avx512(const DepthwiseConv2dParams& p, const int8_t* input, const int8_t* filter,
                         const int32_t* bias, int8_t* output) {
  depthwise_s8<Avx512Channels>(p, input, filter, bias, output);
}

}  // namespace cortexm::x86
