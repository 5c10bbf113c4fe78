// The blocked loop of the int8 matrix product (x86/gemm_s8.h), shared by its x86 variants: a
// variant supplies its vector type (Lanes) and included from a file built for its instruction set.
// Blocks of MR rows by 4 weight rows: each step widens `Lanes::kTaps` taps of every row and weight
// row to int16 and accumulates their pairwise products in int32 lanes; the lane sums of a row's 4
// accumulators come out as one vector, which is requantized 4 outputs at a time (CMSIS-NN's double
// rounding, exactly) and stored as 4 bytes. Weight rows left over (cols % 4) run one at a time.
#pragma once

#include <immintrin.h>

#include <cstring>

#include "x86/gemm_s8.h"

namespace cortexm::x86 {

// requantize() of 4 lanes, each with its own multiplier and shift, plus the output offset,
// clamped: bit for bit the scalar function (64-bit products, halves rounded away from zero).
struct Requantize4 {
  __m128i multiplier, left, right, mask, threshold, output_offset, low, high;

  Requantize4(const GemmS8& g, int32_t n0) {
    alignas(16) int32_t m[4], l[4], r[4];
    for (int j = 0; j < 4; ++j) {
      const int32_t c = g.per_channel ? n0 + j : 0;
      m[j] = g.multipliers[c];
      l[j] = g.shifts[c] > 0 ? g.shifts[c] : 0;
      r[j] = g.shifts[c] > 0 ? 0 : -g.shifts[c];
    }
    multiplier = _mm_load_si128(reinterpret_cast<const __m128i*>(m));
    left = _mm_load_si128(reinterpret_cast<const __m128i*>(l));
    right = _mm_load_si128(reinterpret_cast<const __m128i*>(r));
    mask = _mm_sub_epi32(_mm_sllv_epi32(_mm_set1_epi32(1), right), _mm_set1_epi32(1));
    threshold = _mm_srai_epi32(mask, 1);
    output_offset = _mm_set1_epi32(g.output_offset);
    low = _mm_set1_epi32(g.activation_min);
    high = _mm_set1_epi32(g.activation_max);
  }

  __m128i operator()(__m128i acc) const {
    const __m128i x = _mm_sllv_epi32(acc, left);  // wraps, as the scalar left shift does
    // (x * multiplier + 2^30) >> 31 for lanes 0, 2 and 1, 3; the low 32 bits of a logical shift
    // are those of the arithmetic one.
    const __m128i round = _mm_set1_epi64x(int64_t{1} << 30);
    const __m128i even = _mm_srli_epi64(_mm_add_epi64(_mm_mul_epi32(x, multiplier), round), 31);
    const __m128i odd = _mm_srli_epi64(
        _mm_add_epi64(_mm_mul_epi32(_mm_srli_epi64(x, 32), _mm_srli_epi64(multiplier, 32)), round), 31);
    const __m128i high_mult = _mm_blend_epi16(even, _mm_slli_epi64(odd, 32), 0xCC);
    // Divide by 2^right, rounding halves away from zero: +1 when the remainder exceeds half
    // (or equals it, for a negative quotient).
    __m128i q = _mm_srav_epi32(high_mult, right);
    const __m128i remainder = _mm_and_si128(high_mult, mask);
    const __m128i limit = _mm_sub_epi32(threshold, _mm_srai_epi32(q, 31));
    q = _mm_sub_epi32(q, _mm_cmpgt_epi32(remainder, limit));
    const __m128i out = _mm_add_epi32(q, output_offset);
    return _mm_min_epi32(_mm_max_epi32(out, low), high);
  }
};

template <class Lanes>
struct Gemm {
  using Vec = typename Lanes::Vec;

  // Rows [m0, m0 + MR) by weight rows [n0, n0 + NR): the lane sums, sums[i][j].
  template <int MR, int NR>
  static void dots(const GemmS8& g, int32_t m0, int32_t n0, uint32_t (&sums)[MR][4]) {
    const int8_t* a[MR];
    const int8_t* w[NR];
    for (int i = 0; i < MR; ++i) a[i] = g.a + (m0 + i) * g.a_stride;
    for (int j = 0; j < NR; ++j) w[j] = g.w + int64_t{n0 + j} * g.depth;
    Vec acc[MR][NR];
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) acc[i][j] = Lanes::zero();
    const auto step = [&](int32_t k, auto load) {
      Vec x[MR];
      for (int i = 0; i < MR; ++i) x[i] = load(a[i] + k);
      for (int j = 0; j < NR; ++j) {
        const Vec v = load(w[j] + k);
        for (int i = 0; i < MR; ++i) acc[i][j] = Lanes::dot(acc[i][j], x[i], v);
      }
    };
    int32_t k = 0;
    for (; k + Lanes::kTaps <= g.depth; k += Lanes::kTaps) step(k, [](const int8_t* p) { return Lanes::widen(p); });
    if (k < g.depth) {
      const int32_t rest = g.depth - k;
      step(k, [rest](const int8_t* p) { return Lanes::widen(p, rest); });
    }
    for (int i = 0; i < MR; ++i) {
      alignas(16) uint32_t s[4];
      _mm_store_si128(reinterpret_cast<__m128i*>(s),
                      Lanes::sum4(acc[i][0], acc[i][NR > 1 ? 1 : 0], acc[i][NR > 2 ? 2 : 0], acc[i][NR > 3 ? 3 : 0]));
      for (int j = 0; j < 4; ++j) sums[i][j] = s[j];
    }
  }

  template <int MR>
  static void block4(const GemmS8& g, int32_t m0, int32_t n0, __m128i added, const Requantize4& requantize) {
    uint32_t sums[MR][4];
    dots<MR, 4>(g, m0, n0, sums);
    for (int i = 0; i < MR; ++i) {
      const __m128i acc = _mm_add_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sums[i])), added);
      const __m128i out = requantize(acc);
      const int32_t bytes = _mm_cvtsi128_si32(_mm_packs_epi16(_mm_packs_epi32(out, out), out));
      std::memcpy(g.out + (m0 + i) * g.out_stride + n0, &bytes, 4);
    }
  }

  template <int MR>
  static void block1(const GemmS8& g, int32_t m0, int32_t n, uint32_t added) {
    uint32_t sums[MR][4];
    dots<MR, 1>(g, m0, n, sums);
    for (int i = 0; i < MR; ++i) g.out[(m0 + i) * g.out_stride + n] = output_of(g, n, sums[i][0] + added);
  }

  static void run(const GemmS8& g) {
    constexpr int MR = Lanes::kRows;
    int32_t n = 0;
    for (; n + 4 <= g.cols; n += 4) {
      alignas(16) uint32_t added[4];  // bias + the offset's term, per weight row
      for (int j = 0; j < 4; ++j) added[j] = (g.bias ? static_cast<uint32_t>(g.bias[n + j]) : 0u) + offset_term(g, n + j);
      const __m128i add = _mm_load_si128(reinterpret_cast<const __m128i*>(added));
#if defined(CORTEXM_SINGLE_ROUNDING) && CORTEXM_SINGLE_ROUNDING
      for (int32_t m = 0; m < g.rows; ++m) {  // the single-rounding requantize stays scalar
        uint32_t sums[1][4];
        dots<1, 4>(g, m, n, sums);
        for (int j = 0; j < 4; ++j)
          g.out[m * g.out_stride + n + j] = output_of(g, n + j, sums[0][j] + offset_term(g, n + j));
      }
      static_cast<void>(add);
#else
      const Requantize4 requantize(g, n);
      int32_t m = 0;
      for (; m + MR <= g.rows; m += MR) block4<MR>(g, m, n, add, requantize);
      for (; m < g.rows; ++m) block4<1>(g, m, n, add, requantize);
#endif
    }
    for (; n < g.cols; ++n) {
      const uint32_t added = offset_term(g, n);  // output_of adds the bias
      int32_t m = 0;
      for (; m + MR <= g.rows; m += MR) block1<MR>(g, m, n, added);
      for (; m < g.rows; ++m) block1<1>(g, m, n, added);
    }
  }
};

}  // namespace cortexm::x86
