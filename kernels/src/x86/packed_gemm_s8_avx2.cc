// AVX2 product on packed weights (x86/packed_gemm_s8.h): blocks of MR rows by NR registers of 8
// columns, all MR * NR accumulators in YMM registers (the packed column terms are their start);
// per 2 taps, NR weight registers (int16 pairs) and one row's 2 taps widened to int16 and
// broadcast feed NR VPMADDWDs (exact) and adds. The sums are requantized 8 columns at a time
// (x86/requantize8.h) and stored as bytes. Built with -mavx2; run only when the CPU has AVX2.
#include <immintrin.h>

#include <cstring>

#include "x86/packed_gemm_s8.h"
#include "x86/requantize8.h"

namespace cortexm::x86 {

namespace {

// The add in place (GCC 12 otherwise copies accumulators, as x86/gemm_s8_avx2.cc notes).
inline __m256i dot(__m256i acc, __m256i x, __m256i w) {
  const __m256i products = _mm256_madd_epi16(x, w);
  __asm__("vpaddd %1, %0, %0" : "+x"(acc) : "x"(products));
  return acc;
}

constexpr int32_t kBlock = 8;
constexpr int kMaxBlocks = 2;                          // NR: up to 16 columns per pass
constexpr int kRowsFor[kMaxBlocks + 1] = {0, 8, 6};  // MR: accumulators + weights + 1 of 16 YMM

struct Layout {
  const int32_t* terms;
  const int16_t* weights;
  int32_t pairs;
};

// 2 taps of a row (fewer at the end: 0 after it) as int16, broadcast to every pair of lanes.
inline __m256i taps_i16(const int8_t* row, int32_t count) {
  int16_t two = 0;
  std::memcpy(&two, row, static_cast<size_t>(count));
  return _mm256_cvtepi8_epi16(_mm_set1_epi16(two));
}

template <int MR, int NR>
void block(const GemmS8& g, const Layout& l, int32_t m0, int32_t b0, const Requantize8 (&requantize)[NR]) {
  __m256i acc[MR][NR];
  for (int j = 0; j < NR; ++j) {
    const __m256i term = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(l.terms + (b0 + j) * kBlock));
    for (int i = 0; i < MR; ++i) acc[i][j] = term;
  }
  const int8_t* a[MR];
  for (int i = 0; i < MR; ++i) a[i] = g.a + (m0 + i) * g.a_stride;
  const int64_t block_elements = int64_t{l.pairs} * kBlock * 2;
  const int16_t* w = l.weights + b0 * block_elements;
  const auto step = [&](int32_t q, int32_t count) {
    __m256i wv[NR];
    for (int j = 0; j < NR; ++j)
      wv[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + j * block_elements + int64_t{q} * kBlock * 2));
    for (int i = 0; i < MR; ++i) {
      const __m256i x = taps_i16(a[i] + 2 * q, count);
      for (int j = 0; j < NR; ++j) acc[i][j] = dot(acc[i][j], x, wv[j]);
    }
  };
  const int32_t whole = g.depth / 2;
  for (int32_t q = 0; q < whole; ++q) step(q, 2);
  if (g.depth % 2) step(whole, 1);  // the padded weight is 0
  for (int i = 0; i < MR; ++i) {
    int8_t* out = g.out + (m0 + i) * g.out_stride + b0 * kBlock;
    for (int j = 0; j < NR; ++j) {
      const int64_t bytes = bytes_of(requantize[j](acc[i][j]));
      const int32_t cols = g.cols - (b0 + j) * kBlock;
      std::memcpy(out + j * kBlock, &bytes, static_cast<size_t>(cols < kBlock ? cols : kBlock));
    }
  }
}

template <int NR, int R>
void row_tail(const GemmS8& g, const Layout& l, int32_t m0, int32_t b0, const Requantize8 (&requantize)[NR]) {
  if constexpr (R > 0) {
    if (g.rows - m0 == R) block<R, NR>(g, l, m0, b0, requantize);
    else row_tail<NR, R - 1>(g, l, m0, b0, requantize);
  }
}

// The requantize of the 8 columns from first_col (those past g.cols get multiplier and shift 0).
Requantize8 requantize_of(const GemmS8& g, int32_t first_col) {
  int32_t m[kBlock] = {}, s[kBlock] = {};
  for (int32_t j = 0; j < kBlock && first_col + j < g.cols; ++j) {
    const int32_t c = g.per_channel ? first_col + j : 0;
    m[j] = g.multipliers[c];
    s[j] = g.shifts[c];
  }
  return Requantize8(m, s, g.output_offset, g.activation_min, g.activation_max);
}

template <int NR>
void rows(const GemmS8& g, const Layout& l, int32_t b0, const Requantize8 (&requantize)[NR]) {
  constexpr int MR = kRowsFor[NR];
  int32_t m = 0;
  for (; m + MR <= g.rows; m += MR) block<MR, NR>(g, l, m, b0, requantize);
  row_tail<NR, MR - 1>(g, l, m, b0, requantize);
}

}  // namespace

void packed_gemm_s8_avx2(const GemmS8& g, const void* group) {
  const int32_t blocks = (g.cols + kBlock - 1) / kBlock;
  const Layout l{static_cast<const int32_t*>(group),
                 reinterpret_cast<const int16_t*>(static_cast<const uint8_t*>(group) + int64_t{blocks} * kBlock * 4),
                 (g.depth + 1) / 2};
  for (int32_t b0 = 0; b0 < blocks; b0 += kMaxBlocks) {
    if (blocks - b0 >= 2) {
      const Requantize8 requantize[2] = {requantize_of(g, b0 * kBlock), requantize_of(g, (b0 + 1) * kBlock)};
      rows<2>(g, l, b0, requantize);
    } else {
      const Requantize8 requantize[1] = {requantize_of(g, b0 * kBlock)};
      rows<1>(g, l, b0, requantize);
    }
  }
}

}  // namespace cortexm::x86
