// AVX512-VNNI product on packed weights (x86/packed_gemm_s8.h): blocks of MR rows by NR registers
// of 16 columns, all MR * NR accumulators in ZMM registers (the packed column terms are their
// start); per 4 taps, NR weight registers and one row's 4 bytes broadcast, flipped to unsigned
// (x ^ 0x80 = x + 128), feed NR VPDPBUSDs. The sums are requantized 16 columns at a time (CMSIS-NN's
// double rounding, as x86/requantize8.h) and stored as bytes. Built with -mavx512f -mavx512bw
// -mavx512vl -mavx512vnni; run only when the CPU has them.
#include <immintrin.h>

#include <cstring>

#include "x86/packed_gemm_s8.h"
#include "x86/requantize16.h"

namespace cortexm::x86 {

namespace {

// GCC 12 gives _mm512_dpbusd_epi32 a separate destination and copies the accumulators; this form
// updates one in place.
inline __m512i dot(__m512i acc, __m512i u, __m512i w) {
  __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u), "v"(w));
  return acc;
}

constexpr int32_t kBlock = 16;
constexpr int kMaxBlocks = 4;                          // NR: up to 64 columns per pass
constexpr int kRowsFor[kMaxBlocks + 1] = {0, 12, 12, 8, 6};  // MR: at most 24 accumulators

struct Layout {
  const int32_t* terms;
  const int8_t* weights;
  int32_t quads;
};

// The 4 taps of a row from tap k (fewer at the end: zeros after them), as unsigned bytes.
inline __m512i taps_u8(const int8_t* row, int32_t count) {
  uint32_t four = 0;
  std::memcpy(&four, row, static_cast<size_t>(count));
  return _mm512_set1_epi32(static_cast<int32_t>(four ^ 0x80808080u));
}

// Rows [m0, m0 + MR) by the column blocks [b0, b0 + NR).
template <int MR, int NR>
void block(const GemmS8& g, const Layout& l, int32_t m0, int32_t b0, const Requantize16 (&requantize)[NR]) {
  __m512i acc[MR][NR];
  for (int j = 0; j < NR; ++j) {
    const __m512i term = _mm512_loadu_si512(l.terms + (b0 + j) * kBlock);
    for (int i = 0; i < MR; ++i) acc[i][j] = term;
  }
  const int8_t* a[MR];
  for (int i = 0; i < MR; ++i) a[i] = g.a + (m0 + i) * g.a_stride;
  const int64_t block_bytes = int64_t{l.quads} * kBlock * 4;
  const int8_t* w = l.weights + b0 * block_bytes;
  const int32_t whole = g.depth / 4;
  for (int32_t q = 0; q < whole; ++q) {
    __m512i wv[NR];
    for (int j = 0; j < NR; ++j) wv[j] = _mm512_loadu_si512(w + j * block_bytes + int64_t{q} * kBlock * 4);
    for (int i = 0; i < MR; ++i) {
      const __m512i u = taps_u8(a[i] + 4 * q, 4);
      for (int j = 0; j < NR; ++j) acc[i][j] = dot(acc[i][j], u, wv[j]);
    }
  }
  if (const int32_t rest = g.depth - 4 * whole; rest > 0) {  // padded weights are 0: u = 128 adds nothing
    __m512i wv[NR];
    for (int j = 0; j < NR; ++j) wv[j] = _mm512_loadu_si512(w + j * block_bytes + int64_t{whole} * kBlock * 4);
    for (int i = 0; i < MR; ++i) {
      const __m512i u = taps_u8(a[i] + 4 * whole, rest);
      for (int j = 0; j < NR; ++j) acc[i][j] = dot(acc[i][j], u, wv[j]);
    }
  }
  for (int i = 0; i < MR; ++i) {
    int8_t* out = g.out + (m0 + i) * g.out_stride + b0 * kBlock;
    for (int j = 0; j < NR; ++j) {
      const __m128i bytes = _mm512_cvtsepi32_epi8(requantize[j](acc[i][j]));  // in [-128, 127] already
      const int32_t cols = g.cols - (b0 + j) * kBlock;
      if (cols >= kBlock) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j * kBlock), bytes);
      else _mm_mask_storeu_epi8(out + j * kBlock, static_cast<__mmask16>((1u << cols) - 1), bytes);
    }
  }
}

// The last rows - m0 (< R) rows, one block of exactly that many.
template <int NR, int R>
void row_tail(const GemmS8& g, const Layout& l, int32_t m0, int32_t b0, const Requantize16 (&requantize)[NR]) {
  if constexpr (R > 0) {
    if (g.rows - m0 == R) block<R, NR>(g, l, m0, b0, requantize);
    else row_tail<NR, R - 1>(g, l, m0, b0, requantize);
  }
}

template <int NR>
void columns(const GemmS8& g, const Layout& l, int32_t b0) {
  constexpr int MR = kRowsFor[NR];
  Requantize16 requantize[NR];
  for (int j = 0; j < NR; ++j) {
    const int32_t first_col = (b0 + j) * kBlock;
    const int32_t cols = g.cols - first_col < kBlock ? g.cols - first_col : kBlock;
    const __mmask16 lanes = static_cast<__mmask16>((1u << cols) - 1);
    const int32_t c = g.per_channel ? first_col : 0;
    requantize[j] = g.per_channel ? Requantize16(_mm512_maskz_loadu_epi32(lanes, g.multipliers + c),
                                                 _mm512_maskz_loadu_epi32(lanes, g.shifts + c), g.output_offset,
                                                 g.activation_min, g.activation_max)
                                  : Requantize16(_mm512_set1_epi32(g.multipliers[0]), _mm512_set1_epi32(g.shifts[0]),
                                                 g.output_offset, g.activation_min, g.activation_max);
  }
  int32_t m = 0;
  for (; m + MR <= g.rows; m += MR) block<MR, NR>(g, l, m, b0, requantize);
  row_tail<NR, MR - 1>(g, l, m, b0, requantize);
}

}  // namespace

void packed_gemm_s8_avx512vnni(const GemmS8& g, const void* packed) {
  const int32_t blocks = (g.cols + kBlock - 1) / kBlock;
  const Layout l{static_cast<const int32_t*>(packed),
                 static_cast<const int8_t*>(packed) + int64_t{blocks} * kBlock * 4, (g.depth + 3) / 4};
  for (int32_t b0 = 0; b0 < blocks; b0 += kMaxBlocks) {
    switch (blocks - b0 < kMaxBlocks ? blocks - b0 : kMaxBlocks) {
      case 1: columns<1>(g, l, b0); break;
      case 2: columns<2>(g, l, b0); break;
      case 3: columns<3>(g, l, b0); break;
      default: columns<4>(g, l, b0); break;
    }
  }
}

}  // namespace cortexm::x86
