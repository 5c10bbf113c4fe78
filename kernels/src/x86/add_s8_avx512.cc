// AVX-512 quantized add (x86/add_s8.h): 16 elements per step widened to int32, offset, shifted left
// by kAddLeftShift, each input requantized to the common scale, the wrapping sum requantized to the
// output (x86/requantize16.h, which adds the offset and clamps); the last elements through masked
// loads and stores. Built with -mavx512f -mavx512bw -mavx512vl.
#include "x86/add_s8.h"

#include <climits>

#include "x86/requantize16.h"

namespace cortexm::x86 {

void add_s8_avx512(const AddParams& p, const int8_t* a, const int8_t* b, int8_t* out, int32_t count) {
  const auto scale = [](int32_t multiplier, int32_t shift) {
    return Requantize16(_mm512_set1_epi32(multiplier), _mm512_set1_epi32(shift), 0, INT32_MIN, INT32_MAX);
  };
  const Requantize16 lhs = scale(p.lhs_multiplier, p.lhs_shift), rhs = scale(p.rhs_multiplier, p.rhs_shift);
  const Requantize16 output(_mm512_set1_epi32(p.output_multiplier), _mm512_set1_epi32(p.output_shift),
                            p.output_offset, p.activation_min, p.activation_max);
  const __m512i lhs_offset = _mm512_set1_epi32(p.lhs_offset), rhs_offset = _mm512_set1_epi32(p.rhs_offset);
  for (int32_t i = 0; i < count; i += 16) {
    const __mmask16 lanes = count - i >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << (count - i)) - 1);
    const __m512i x = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(lanes, a + i));
    const __m512i y = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(lanes, b + i));
    const __m512i x_scaled = lhs(_mm512_slli_epi32(_mm512_add_epi32(x, lhs_offset), kAddLeftShift));
    const __m512i y_scaled = rhs(_mm512_slli_epi32(_mm512_add_epi32(y, rhs_offset), kAddLeftShift));
    _mm_mask_storeu_epi8(out + i, lanes, _mm512_cvtsepi32_epi8(output(_mm512_add_epi32(x_scaled, y_scaled))));
  }
}

}  // namespace cortexm::x86
