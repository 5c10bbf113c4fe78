// The blocked loop of the int8 matrix product (x86/gemm_s8.h), shared by its x86 variants: a
// variant supplies its vector type (Lanes) and included from a file built for its instruction set.
// Blocks of MR rows by 4 weight rows: each step widens `Lanes::kTaps` taps of every row and weight
// row to int16 (with kMaskedSteps every step loads through a mask, so the last one takes fewer
// taps; otherwise the last step re-reads the last kTaps taps with those summed already zeroed in
// the rows) and accumulates their pairwise products in int32 lanes; the lane sums of a row's 4
// accumulators come out as one vector; two rows' are requantized together (x86/requantize8.h) and
// stored as 4 bytes each. Weight rows left over (cols % 4) run one at a time.
#pragma once

#include <immintrin.h>

#include <cstring>

#include "x86/gemm_s8.h"
#include "x86/requantize8.h"

namespace cortexm::x86 {

template <class Lanes>
struct Gemm {
  using Vec = typename Lanes::Vec;

  // One step: taps [k, k + kTaps) of every row and weight row into the accumulators.
  template <int MR, int NR, typename LoadRow, typename LoadWeights>
  __attribute__((always_inline)) static void step(Vec (&acc)[MR][NR], const int8_t* const (&a)[MR],
                                                  const int8_t* const (&w)[NR], int32_t k, LoadRow load_row,
                                                  LoadWeights load_weights) {
    Vec x[MR];
    for (int i = 0; i < MR; ++i) x[i] = load_row(a[i] + k);
    for (int j = 0; j < NR; ++j) {
      const Vec v = load_weights(w[j] + k);
      for (int i = 0; i < MR; ++i) acc[i][j] = Lanes::dot(acc[i][j], x[i], v);
    }
  }

  // Rows [m0, m0 + MR) by weight rows [n0, n0 + NR): the lane sums, sums[i][j].
  template <int MR, int NR>
  static void dots(const GemmS8& g, int32_t m0, int32_t n0, uint32_t (&sums)[MR][4]) {
    const int8_t* a[MR];
    const int8_t* w[NR];
    for (int i = 0; i < MR; ++i) a[i] = g.a + (m0 + i) * g.a_stride;
    for (int j = 0; j < NR; ++j) w[j] = g.w + int64_t{n0 + j} * g.depth;
    const int8_t* const(&rows)[MR] = a;
    const int8_t* const(&weights)[NR] = w;
    Vec acc[MR][NR];
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) acc[i][j] = Lanes::zero();
    if constexpr (Lanes::kMaskedSteps) {  // every step through masked loads: one loop, no tail
      for (int32_t k = 0; k < g.depth; k += Lanes::kTaps) {
        const int32_t taps = g.depth - k < Lanes::kTaps ? g.depth - k : Lanes::kTaps;
        const auto load = [taps](const int8_t* p) { return Lanes::widen(p, taps); };
        step<MR, NR>(acc, rows, weights, k, load, load);
      }
    } else {
      const auto whole = [](const int8_t* p) { return Lanes::widen(p); };
      int32_t k = 0;
      for (; k + Lanes::kTaps <= g.depth; k += Lanes::kTaps) step<MR, NR>(acc, rows, weights, k, whole, whole);
      if (k < g.depth) {
        // The last kTaps taps again, in bounds, the rows' taps summed already zeroed; fewer than
        // kTaps taps in all: copies of them.
        const int32_t rest = g.depth - k;
        if (g.depth >= Lanes::kTaps) {
          step<MR, NR>(acc, rows, weights, g.depth - Lanes::kTaps,
                       [rest](const int8_t* p) { return Lanes::last(p, rest); }, whole);
        } else {
          const auto part = [rest](const int8_t* p) { return Lanes::widen(p, rest); };
          step<MR, NR>(acc, rows, weights, k, part, part);
        }
      }
    }
    for (int i = 0; i < MR; ++i) {
      alignas(16) uint32_t s[4];
      _mm_store_si128(reinterpret_cast<__m128i*>(s),
                      Lanes::sum4(acc[i][0], acc[i][NR > 1 ? 1 : 0], acc[i][NR > 2 ? 2 : 0], acc[i][NR > 3 ? 3 : 0]));
      for (int j = 0; j < 4; ++j) sums[i][j] = s[j];
    }
  }

  // The 8 lanes: 4 weight rows' parameters twice (two rows of outputs).
  static Requantize8 requantize_of(const GemmS8& g, int32_t n0) {
    int32_t m[8], s[8];
    for (int j = 0; j < 8; ++j) {
      const int32_t c = g.per_channel ? n0 + j % 4 : 0;
      m[j] = g.multipliers[c];
      s[j] = g.shifts[c];
    }
    return Requantize8(m, s, g.output_offset, g.activation_min, g.activation_max);
  }

  template <int MR>
  static void block4(const GemmS8& g, int32_t m0, int32_t n0, __m128i added, const Requantize8& requantize) {
    uint32_t sums[MR][4];
    dots<MR, 4>(g, m0, n0, sums);
    for (int i = 0; i < MR; i += 2) {
      const __m128i lo = _mm_add_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sums[i])), added);
      const __m128i hi = i + 1 < MR ? _mm_add_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sums[i + 1])), added)
                                    : lo;
      const int64_t bytes = bytes_of(requantize(_mm256_set_m128i(hi, lo)));
      std::memcpy(g.out + (m0 + i) * g.out_stride + n0, &bytes, 4);
      if (i + 1 < MR) std::memcpy(g.out + (m0 + i + 1) * g.out_stride + n0, reinterpret_cast<const char*>(&bytes) + 4, 4);
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
      const Requantize8 requantize = requantize_of(g, n);
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
