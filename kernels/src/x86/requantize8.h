// requantize() of 8 int32 lanes, each with its own multiplier and shift, plus the output offset,
// clamped to the activation range: bit for bit the scalar function (CMSIS-NN's double rounding:
// a wrapping left shift, the 64-bit doubling high multiply, a divide by 2^right with halves rounded
// away from zero). AVX2; included by the x86 variants' files, which are built for it.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace cortexm::x86 {

struct Requantize8 {
  __m256i multiplier, left, right, mask, threshold, output_offset, low, high;

  Requantize8(const int32_t* multipliers, const int32_t* shifts, int32_t output_offset_value,
              int32_t activation_min, int32_t activation_max) {
    const __m256i shift = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(shifts));
    const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi32(1);
    multiplier = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(multipliers));
    left = _mm256_max_epi32(shift, zero);
    right = _mm256_max_epi32(_mm256_sub_epi32(zero, shift), zero);
    mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, right), one);
    threshold = _mm256_srai_epi32(mask, 1);
    output_offset = _mm256_set1_epi32(output_offset_value);
    low = _mm256_set1_epi32(activation_min);
    high = _mm256_set1_epi32(activation_max);
  }

  __m256i operator()(__m256i acc) const {
    const __m256i x = _mm256_sllv_epi32(acc, left);  // wraps, as the scalar left shift does
    // (x * multiplier + 2^30) >> 31 for the even and the odd lanes; the low 32 bits of a logical
    // shift are those of the arithmetic one.
    const __m256i round = _mm256_set1_epi64x(int64_t{1} << 30);
    const __m256i even = _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(x, multiplier), round), 31);
    const __m256i odd = _mm256_srli_epi64(
        _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(x, 32), _mm256_srli_epi64(multiplier, 32)), round), 31);
    const __m256i high_mult = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
    // Divide by 2^right: +1 when the remainder exceeds half (or equals it, for a negative quotient).
    __m256i q = _mm256_srav_epi32(high_mult, right);
    const __m256i remainder = _mm256_and_si256(high_mult, mask);
    const __m256i limit = _mm256_sub_epi32(threshold, _mm256_srai_epi32(q, 31));
    q = _mm256_sub_epi32(q, _mm256_cmpgt_epi32(remainder, limit));
    const __m256i out = _mm256_add_epi32(q, output_offset);
    return _mm256_min_epi32(_mm256_max_epi32(out, low), high);
  }
};

// The low byte of each of 8 lanes already in [-128, 127], in lane order.
inline int64_t bytes_of(__m256i v) {
  const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  return _mm_cvtsi128_si64(_mm_packs_epi16(words, words));
}

}  // namespace cortexm::x86
