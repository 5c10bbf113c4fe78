// AVX2 depthwise conv (x86/depthwise_block.h): 8 channels per step, VPMOVSXBD, VPMADDWD (VPMULLD
// for the largest windows), VPADDD.
// Built with -mavx2.
#include "x86/depthwise_block.h"
#include "x86/depthwise_s8.h"

namespace cortexm::x86 {

namespace {

struct Avx2Channels {
  using Vec = __m256i;
  static constexpr int32_t kChannels = 8;

  static Vec splat(int32_t v) { return _mm256_set1_epi32(v); }
  static Vec load32(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static Vec widen(const int8_t* p) {
    int64_t bytes;
    std::memcpy(&bytes, p, sizeof(bytes));
    return _mm256_cvtepi8_epi32(_mm_cvtsi64_si128(bytes));
  }
  static Vec add(Vec a, Vec b) { return _mm256_add_epi32(a, b); }
  static Vec multiply_add(Vec acc, Vec x, Vec w) { return _mm256_add_epi32(acc, _mm256_mullo_epi32(x, w)); }
  // A weight as the low half of its lane, the high half 0: dot() multiplies by it with VPMADDWD.
  static Vec weight(const int8_t* p) { return _mm256_and_si256(widen(p), _mm256_set1_epi32(0xFFFF)); }
  // acc + x * w for x in int16 range and w from weight().
  static Vec dot(Vec acc, Vec x, Vec w) { return _mm256_add_epi32(acc, _mm256_madd_epi16(x, w)); }

  struct Requantize {
    Requantize8 lanes;
    Requantize(const ConvQuantParams& q, int32_t c)
        : lanes(q.multipliers + c, q.shifts + c, q.output_offset, q.activation_min, q.activation_max) {}
    void store(Vec acc, int8_t* out) const {
      const int64_t bytes = bytes_of(lanes(acc));
      std::memcpy(out, &bytes, 8);
    }
  };
};

}  // namespace

void depthwise_s8_avx2(const DepthwiseConv2dParams& p, const int8_t* input, const int8_t* filter,
                       const int32_t* bias, int8_t* output) {
  depthwise_s8<Avx2Channels>(p, input, filter, bias, output);
}

}  // namespace cortexm::x86
