// requantize() of 16 int32 lanes (x86/requantize8.h's steps on ZMM registers). AVX-512 F; included
// by the AVX-512 variants' files, which are built for it.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace cortexm::x86 {
// Internal linkage: each file that includes this is built for its own instruction set, and the
// linker must not pick one file's copy of an inline function for another.
namespace {

// requantize() of 16 int32 lanes with their own multipliers and shifts, the output offset added,
// clamped: bit for bit the scalar function (x86/requantize8.h's steps on ZMM registers).
struct Requantize16 {
  __m512i multiplier, left, right, mask, threshold, output_offset, low, high;

  Requantize16() = default;
  Requantize16(__m512i multipliers, __m512i shift, int32_t output_offset_value, int32_t activation_min,
               int32_t activation_max)
      : multiplier(multipliers) {
    const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi32(1);
    left = _mm512_max_epi32(shift, zero);
    right = _mm512_max_epi32(_mm512_sub_epi32(zero, shift), zero);
    mask = _mm512_sub_epi32(_mm512_sllv_epi32(one, right), one);
    threshold = _mm512_srai_epi32(mask, 1);
    output_offset = _mm512_set1_epi32(output_offset_value);
    low = _mm512_set1_epi32(activation_min);
    high = _mm512_set1_epi32(activation_max);
  }

  __m512i operator()(__m512i acc) const {
    const __m512i x = _mm512_sllv_epi32(acc, left);  // wraps, as the scalar left shift does
    const __m512i round = _mm512_set1_epi64(int64_t{1} << 30);
    const __m512i even = _mm512_srli_epi64(_mm512_add_epi64(_mm512_mul_epi32(x, multiplier), round), 31);
    const __m512i odd = _mm512_srli_epi64(
        _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(x, 32), _mm512_srli_epi64(multiplier, 32)), round), 31);
    const __m512i high_mult = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
    // Divide by 2^right: +1 when the remainder exceeds half (or equals it, for a negative quotient).
    __m512i q = _mm512_srav_epi32(high_mult, right);
    const __m512i remainder = _mm512_and_si512(high_mult, mask);
    const __m512i limit = _mm512_sub_epi32(threshold, _mm512_srai_epi32(q, 31));
    q = _mm512_mask_add_epi32(q, _mm512_cmpgt_epi32_mask(remainder, limit), q, _mm512_set1_epi32(1));
    const __m512i out = _mm512_add_epi32(q, output_offset);
    return _mm512_min_epi32(_mm512_max_epi32(out, low), high);
  }
};

}  // namespace
}  // namespace cortexm::x86
