// DSP variant of quantized_conv2d. Each pixel's receptive field becomes an int16 column (input +
// input_offset, padded taps 0; with bias_includes_input_offset the input as it is, padded taps
// -input_offset) whose full quads of taps are stored as (x0, x2, x1, x3): SXTB16 of 4 filter bytes
// gives (w0, w2) and SXTB16 ROR #8 (w1, w3), so a quad of one filter row against one column is two
// SMLADs. The columns of a block of pixels are interleaved quad by quad.
//
// A 1x1 window without padding: blocks of 2 pixels. The dot loop takes 2 filter rows by the 2
// columns, 2 quads per pass, in inline assembly (GCC spills its own): per quad one LDM (the 4
// column words), 2 LDRs (weights), 4 SXTB16, 8 SMLADs for 16 MACs. The output stage (its own
// function) splits each channel's shift once for both pixels and clamps the 4 outputs of a pass in
// one word. It needs no scratch (CMSIS-NN's 1x1 kernel takes none either): its input rows are
// widened a word at a time (SXTAB16 adds the offset) into a block kept in the last bytes of the
// output, which no output has reached yet; the pixels whose outputs reach those bytes read their
// input rows in place (4 SXTB16 per quad more: 20 instructions per 16 MACs). Written over its input
// (quantized_conv2d_in_place_lag), the output's last bytes lie over input still to read: each
// block's columns then go word-aligned right after the block's outputs, below its input rows (the
// lag leaves that room), in a loop of its own (pointwise_over_input).
//
// Other windows (gathered): blocks of 3 pixels in scratch, each run of a window row's taps widened
// a whole quad at a time, one filter row against the 3 columns at once (dot_3x1: 10 instructions
// per 12 MACs).
#include "variants.h"

#if CORTEXM_BUILT_ISA == 1

#include "conv_window.h"
#include "cortexm/kernels/requantize.h"
#include "dsp/dsp_ops.h"

namespace cortexm::dsp {

namespace {

constexpr int32_t kPixels = 2;

// Two words of a word-aligned column.
inline void load_pair(const int16_t* p, uint32_t& lo, uint32_t& hi) {
  const uint32_t* words = static_cast<const uint32_t*>(__builtin_assume_aligned(p, 4));
  uint64_t v;
  std::memcpy(&v, words, sizeof(v));
  lo = static_cast<uint32_t>(v);
  hi = static_cast<uint32_t>(v >> 32);
}

// The columns of `cols` pixels (2, or 3 for gathered windows) share one block of scratch,
// interleaved by quads so that one pointer walks them all: quad q of column j at int16 index
// 4 cols q + 4j, in (x0, x2, x1, x3) order; then the length % 4 leftover taps of column 0, then
// those of column 1, ...
inline int16_t* quad_of(int16_t* block, int32_t j) { return block + 4 * j; }
inline int16_t* tail_of(int16_t* block, int32_t cols, int32_t length, int32_t j) {
  return block + cols * (length / 4 * 4) + j * (length % 4);
}

// Widens `length` input bytes into column j of a block.
inline void widen_row(const int8_t* __restrict src, int32_t length, int32_t offset,
                      int16_t* __restrict block, int32_t j) {
  const uint32_t offsets = splat16(offset);
  const int32_t quads = length / 4;
  int16_t* dst = static_cast<int16_t*>(__builtin_assume_aligned(quad_of(block, j), 4));
  for (int32_t i = 0; i < quads; ++i, src += 4, dst += 8) {
    const uint32_t v = load_u32(src);
    const uint64_t pair = sxtab16(offsets, v) | uint64_t{sxtab16_ror8(offsets, v)} << 32;
    std::memcpy(dst, &pair, sizeof(pair));
  }
  int16_t* tail = tail_of(block, kPixels, length, j);
  for (int32_t k = 0; k < length % 4; ++k) tail[k] = static_cast<int16_t>(src[k] + offset);
}

// Writes taps [first, first + count) of column j of a block, tap k's value being value(i) for
// i = k - first: the quads' taps at their reordered places, then the leftover taps.
template <typename Value>
inline void put_taps(int16_t* block, int32_t cols, int32_t length, int32_t j, int32_t first, int32_t count,
                     Value value) {
  constexpr int32_t kPlace[4] = {0, 2, 1, 3};  // (x0, x2, x1, x3)
  const int32_t in_quads = length / 4 * 4;
  int32_t i = 0;
  int32_t k = first;
  if (k < in_quads) {
    int16_t* quad = quad_of(block, j) + 4 * cols * (k / 4);
    int32_t lane = k % 4;
    const int32_t quad_taps = (first + count < in_quads ? first + count : in_quads) - first;
    for (; i < quad_taps; ++i) {
      quad[kPlace[lane]] = static_cast<int16_t>(value(i));
      if (++lane == 4) {
        lane = 0;
        quad += 4 * cols;
      }
    }
    k += quad_taps;
  }
  int16_t* tail = tail_of(block, cols, length, j) + (k - in_quads);
  for (; i < count; ++i) *tail++ = static_cast<int16_t>(value(i));
}

// put_taps for `count` consecutive taps from `first`: value(i) for the single taps, quad(i) for
// the 4 taps i .. i + 3 of a whole quad, as the (x0, x2), (x1, x3) words it stores. Taps up to
// the next quad boundary go one at a time, then whole quads (one word pair each), then the rest.
template <typename Value, typename Quad>
inline void put_runs(int16_t* block, int32_t cols, int32_t length, int32_t j, int32_t first, int32_t count,
                     Value value, Quad quad) {
  const int32_t in_quads = length / 4 * 4;
  const int32_t end = first + count;
  int32_t head = (4 - first % 4) % 4;  // taps to the next quad boundary
  if (head > count) head = count;
  if (head > 0) put_taps(block, cols, length, j, first, head, value);
  int32_t k = first + head;
  const int32_t quads_end = end < in_quads ? end / 4 * 4 : in_quads;
  if (k < quads_end) {
    uint32_t* dst = static_cast<uint32_t*>(__builtin_assume_aligned(quad_of(block, j) + cols * k, 4));
    for (int32_t i = k - first; k < quads_end; k += 4, i += 4, dst += 2 * cols) {
      uint32_t lo, hi;
      quad(i, lo, hi);
      dst[0] = lo;
      dst[1] = hi;
    }
  }
  if (k < end)
    put_taps(block, cols, length, j, k, end - k, [&value, k, first](int32_t i) { return value(i + k - first); });
}

// Taps [first, first + count) of column j of a block set to pad, one at a time: padded taps are
// the few at the edges, and their own quad loop would cost more flash than it saves. Out of line,
// as copy_taps: a gather calls them once per run of taps.
__attribute__((noinline)) void fill_taps(int16_t* block, int32_t cols, int32_t length, int32_t j, int32_t first,
                                         int32_t count, int32_t pad) {
  put_taps(block, cols, length, j, first, count, [pad](int32_t) { return pad; });
}

// Taps [first, first + count) of column j of a block from the input bytes src, plus offset.
__attribute__((noinline)) void copy_taps(int16_t* block, int32_t cols, int32_t length, int32_t j, int32_t first,
                                         int32_t count, const int8_t* src, int32_t offset) {
  const uint32_t offsets = splat16(offset);
  put_runs(
      block, cols, length, j, first, count, [src, offset](int32_t i) { return src[i] + offset; },
      [src, offsets](int32_t i, uint32_t& lo, uint32_t& hi) {
        const uint32_t v = load_u32(src + i);
        lo = sxtab16(offsets, v);
        hi = sxtab16_ror8(offsets, v);
      });
}

// Adds taps x0, x1 (of pixels 0 and 1) times weights a, b (of filter rows 0 and 1) to the sums
// s<row><pixel>, modulo 2^32.
inline void add_taps(int32_t x0, int32_t x1, int32_t a, int32_t b, int32_t& s00, int32_t& s01, int32_t& s10,
                     int32_t& s11) {
  s00 = static_cast<int32_t>(wrap(s00) + wrap(x0 * a));
  s01 = static_cast<int32_t>(wrap(s01) + wrap(x1 * a));
  s10 = static_cast<int32_t>(wrap(s10) + wrap(x0 * b));
  s11 = static_cast<int32_t>(wrap(s11) + wrap(x1 * b));
}

inline void store_sums(int32_t s00, int32_t s01, int32_t s10, int32_t s11, int32_t (&sums)[2][kPixels]) {
  sums[0][0] = s00;
  sums[0][1] = s01;
  sums[1][0] = s10;
  sums[1][1] = s11;
}

// sums[r][j]: filter rows w0 and w0 + length against both columns of a block.
__attribute__((always_inline)) inline void dot_2x2(const int8_t* __restrict w0, int32_t length,
                                                   const int16_t* __restrict block,
                                                   int32_t (&sums)[2][kPixels]) {
  const int8_t* __restrict w1 = w0 + length;
  int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
  const int16_t* c = block;
  const int16_t* const end = block + 2 * (length / 4 * 4);
#if defined(CORTEXM_EMULATE_DSP)
  while (c != end) {
    uint32_t x0, y0, x1, y1;
    load_pair(c, x0, y0);
    load_pair(c + 4, x1, y1);
    c += 8;
    const uint32_t a = load_u32(w0), b = load_u32(w1);
    w0 += 4;
    w1 += 4;
    s00 = smlad(sxtb16(a), x0, s00);
    s01 = smlad(sxtb16(a), x1, s01);
    s00 = smlad(sxtb16_ror8(a), y0, s00);
    s01 = smlad(sxtb16_ror8(a), y1, s01);
    s10 = smlad(sxtb16(b), x0, s10);
    s11 = smlad(sxtb16(b), x1, s11);
    s10 = smlad(sxtb16_ror8(b), y0, s10);
    s11 = smlad(sxtb16_ror8(b), y1, s11);
  }
#else
  // The same loop by hand, two quads per pass: 13 registers are live, and GCC's version spills
  // (1.28 instructions per MAC); this one is 15 per quad (16 MACs) and 3 per pass.
#define CORTEXM_DSP_QUAD                                   \
  "ldmia  %[c]!, {r0, r1, r2, r3}\n\t"                     \
  "ldr    %[v], [%[w0]], #4\n\t"                          \
  "sxtb16 %[t], %[v]\n\t"                                 \
  "sxtb16 %[v], %[v], ror #8\n\t"                         \
  "smlad  %[s00], %[t], %[x0], %[s00]\n\t"                \
  "smlad  %[s01], %[t], %[x1], %[s01]\n\t"                \
  "smlad  %[s00], %[v], %[y0], %[s00]\n\t"                \
  "smlad  %[s01], %[v], %[y1], %[s01]\n\t"                \
  "ldr    %[v], [%[w1]], #4\n\t"                          \
  "sxtb16 %[t], %[v]\n\t"                                 \
  "sxtb16 %[v], %[v], ror #8\n\t"                         \
  "smlad  %[s10], %[t], %[x0], %[s10]\n\t"                \
  "smlad  %[s11], %[t], %[x1], %[s11]\n\t"                \
  "smlad  %[s10], %[v], %[y0], %[s10]\n\t"                \
  "smlad  %[s11], %[v], %[y1], %[s11]\n\t"
#define CORTEXM_DSP_QUAD_OPERANDS                                                               \
  [s00] "+r"(s00), [s01] "+r"(s01), [s10] "+r"(s10), [s11] "+r"(s11), [c] "+r"(c),            \
      [w0] "+r"(w0), [w1] "+r"(w1), [x0] "=&r"(x0), [y0] "=&r"(y0), [x1] "=&r"(x1),            \
      [y1] "=&r"(y1), [v] "=&r"(v), [t] "=&r"(t)
  // LDM takes its registers in ascending order: the 4 column words are pinned to r0..r3.
  register uint32_t x0 __asm__("r0");
  register uint32_t y0 __asm__("r1");
  register uint32_t x1 __asm__("r2");
  register uint32_t y1 __asm__("r3");
  uint32_t v, t;
  if ((length / 4) % 2)
    __asm__ volatile(CORTEXM_DSP_QUAD : CORTEXM_DSP_QUAD_OPERANDS : : "cc", "memory");
  if (c != end) {
    __asm__ volatile(
        "1:\n\t" CORTEXM_DSP_QUAD CORTEXM_DSP_QUAD
        "ldr    %[t], %[end]\n\t"
        "cmp    %[c], %[t]\n\t"
        "bne    1b"
        : CORTEXM_DSP_QUAD_OPERANDS
        : [end] "m"(end)
        : "cc", "memory");
  }
#undef CORTEXM_DSP_QUAD
#undef CORTEXM_DSP_QUAD_OPERANDS
#endif
  const int32_t rest = length % 4;
  for (int32_t k = 0; k < rest; ++k) add_taps(c[k], c[rest + k], w0[k], w1[k], s00, s01, s10, s11);
  store_sums(s00, s01, s10, s11, sums);
}

// One filter row against column j of a block.
inline int32_t dot_1x1(const int8_t* __restrict w, int32_t length, const int16_t* __restrict block,
                       int32_t j) {
  int32_t s = 0;
  const int16_t* c = quad_of(const_cast<int16_t*>(block), j);
  for (int32_t i = 0; i < length / 4; ++i, c += 8, w += 4) {
    uint32_t x, y;
    load_pair(c, x, y);
    const uint32_t a = load_u32(w);
    s = smlad(sxtb16(a), x, s);
    s = smlad(sxtb16_ror8(a), y, s);
  }
  const int16_t* tail = tail_of(const_cast<int16_t*>(block), kPixels, length, j);
  for (int32_t k = 0; k < length % 4; ++k) s = static_cast<int32_t>(wrap(s) + wrap(tail[k] * w[k]));
  return s;
}

// The dots of a block of 2 pixels whose columns are in a block.
struct BlockColumns {
  const int16_t* block;

  void dot_2x2(const int8_t* w, int32_t length, int32_t (&sums)[2][kPixels]) const {
    dsp::dot_2x2(w, length, block, sums);
  }
  int32_t dot_1x1(const int8_t* w, int32_t length, int32_t j) const { return dsp::dot_1x1(w, length, block, j); }
};

// Filter rows w0, w0 + length against the int8 input rows x0, x1, the offset added to each tap.
// sums[r][j] as in dot_2x2.
inline void dot_2x2_in_place(const int8_t* __restrict w0, int32_t length, const int8_t* __restrict x0,
                             const int8_t* __restrict x1, int32_t offset, int32_t (&sums)[2][kPixels]) {
  const int8_t* __restrict w1 = w0 + length;
  const uint32_t offsets = splat16(offset);
  int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
  int32_t quads = length / 4;
#if !defined(CORTEXM_EMULATE_DSP)
  // No offset (the folded bias) and the second input row as far from the first as the second
  // filter row (stride 1, one group): 13 registers, one pointer and a distance for each pair
  // of rows; per quad 2 + 2 LDRs, 8 SXTB16, 8 SMLADs for 16 MACs (CMSIS-NN's arm_nn_mat_mult_nt_t_s8
  // scheme), 4 quads per pass.
  if (offset == 0 && x1 - x0 == length) {
#define CORTEXM_DSP_QUAD_IN_PLACE                         \
  "ldr    %[b], [%[x], %[len]]\n\t"                       \
  "ldr    %[a], [%[x]], #4\n\t"                           \
  "sxtb16 %[b2], %[b], ror #8\n\t"                        \
  "sxtb16 %[b], %[b]\n\t"                                 \
  "sxtb16 %[a2], %[a], ror #8\n\t"                        \
  "sxtb16 %[a], %[a]\n\t"                                 \
  "ldr    %[v], [%[w], %[len]]\n\t"                       \
  "sxtb16 %[t], %[v]\n\t"                                 \
  "sxtb16 %[v], %[v], ror #8\n\t"                         \
  "smlad  %[s10], %[t], %[a], %[s10]\n\t"                 \
  "smlad  %[s11], %[t], %[b], %[s11]\n\t"                 \
  "smlad  %[s10], %[v], %[a2], %[s10]\n\t"                \
  "smlad  %[s11], %[v], %[b2], %[s11]\n\t"                \
  "ldr    %[v], [%[w]], #4\n\t"                           \
  "sxtb16 %[t], %[v]\n\t"                                 \
  "sxtb16 %[v], %[v], ror #8\n\t"                         \
  "smlad  %[s00], %[t], %[a], %[s00]\n\t"                 \
  "smlad  %[s01], %[t], %[b], %[s01]\n\t"                 \
  "smlad  %[s00], %[v], %[a2], %[s00]\n\t"                \
  "smlad  %[s01], %[v], %[b2], %[s01]\n\t"
#define CORTEXM_DSP_QUAD_IN_PLACE_OPERANDS                                                          \
  [s00] "+r"(s00), [s01] "+r"(s01), [s10] "+r"(s10), [s11] "+r"(s11), [x] "+r"(x), [w] "+r"(w), \
      [a] "=&r"(a), [a2] "=&r"(a2), [b] "=&r"(b), [b2] "=&r"(b2), [v] "=&r"(v), [t] "=&r"(t)
    const int8_t* x = x0;
    const int8_t* w = w0;
    uint32_t a, a2, b, b2, v, t;
    for (int32_t i = 0; i < quads % 4; ++i)
      __asm__ volatile(CORTEXM_DSP_QUAD_IN_PLACE
                       : CORTEXM_DSP_QUAD_IN_PLACE_OPERANDS
                       : [len] "r"(length)
                       : "cc", "memory");
    if (quads >= 4) {
      const int8_t* const end = w0 + quads * 4;
      __asm__ volatile("1:\n\t" CORTEXM_DSP_QUAD_IN_PLACE CORTEXM_DSP_QUAD_IN_PLACE
                           CORTEXM_DSP_QUAD_IN_PLACE CORTEXM_DSP_QUAD_IN_PLACE
                       "ldr    %[t], %[end]\n\t"
                       "cmp    %[w], %[t]\n\t"
                       "bne    1b"
                       : CORTEXM_DSP_QUAD_IN_PLACE_OPERANDS
                       : [len] "r"(length), [end] "m"(end)
                       : "cc", "memory");
    }
#undef CORTEXM_DSP_QUAD_IN_PLACE
#undef CORTEXM_DSP_QUAD_IN_PLACE_OPERANDS
    x0 = x;
    x1 = x + length;
    w0 = w;
    w1 = w + length;
    quads = 0;
  }
#endif
  for (int32_t i = 0; i < quads; ++i, x0 += 4, x1 += 4, w0 += 4, w1 += 4) {
    const uint32_t a = load_u32(w0), b = load_u32(w1);
    const uint32_t a_even = sxtb16(a), a_odd = sxtb16_ror8(a);
    const uint32_t b_even = sxtb16(b), b_odd = sxtb16_ror8(b);
    const uint32_t x = load_u32(x0), y = load_u32(x1);
    const uint32_t x_even = sxtab16(offsets, x), x_odd = sxtab16_ror8(offsets, x);
    const uint32_t y_even = sxtab16(offsets, y), y_odd = sxtab16_ror8(offsets, y);
    s00 = smlad(a_odd, x_odd, smlad(a_even, x_even, s00));
    s10 = smlad(b_odd, x_odd, smlad(b_even, x_even, s10));
    s01 = smlad(a_odd, y_odd, smlad(a_even, y_even, s01));
    s11 = smlad(b_odd, y_odd, smlad(b_even, y_even, s11));
  }
  for (int32_t k = 0; k < length % 4; ++k) add_taps(x0[k] + offset, x1[k] + offset, w0[k], w1[k], s00, s01, s10, s11);
  store_sums(s00, s01, s10, s11, sums);
}

// One filter row against the int8 input row x, the offset added to each tap.
inline int32_t dot_1x1_in_place(const int8_t* __restrict w, int32_t length, const int8_t* __restrict x,
                                int32_t offset) {
  const uint32_t offsets = splat16(offset);
  int32_t s = 0;
  for (int32_t i = 0; i < length / 4; ++i, x += 4, w += 4) {
    const uint32_t a = load_u32(w), v = load_u32(x);
    s = smlad(sxtb16_ror8(a), sxtab16_ror8(offsets, v), smlad(sxtb16(a), sxtab16(offsets, v), s));
  }
  for (int32_t k = 0; k < length % 4; ++k) s = static_cast<int32_t>(wrap(s) + wrap((x[k] + offset) * w[k]));
  return s;
}

// The dots of a block of 2 pixels of a 1x1 window read from their input rows.
struct RowsInPlace {
  const int8_t* rows[kPixels];
  int32_t offset;

  void dot_2x2(const int8_t* w, int32_t length, int32_t (&sums)[2][kPixels]) const {
    dot_2x2_in_place(w, length, rows[0], rows[1], offset, sums);
  }
  int32_t dot_1x1(const int8_t* w, int32_t length, int32_t j) const {
    return dot_1x1_in_place(w, length, rows[j], offset);
  }
};

inline int8_t output_value(int32_t sum, const Channel& ch, const Stage& s) {
  return static_cast<int8_t>(clamp(requantized(sum, ch, s), s.activation_min, s.activation_max));
}

// The outputs of channels [first_channel, first_channel + channels) at the `count` (1 or 2)
// pixels of a block; out0 and out1 point at the pixels' first_channel, w at its filter row. Its
// own function, so that its registers are allocated apart from the gather's. The 4 outputs of 2
// channels by 2 pixels are saturated to int8 (SSAT), packed in one word and clamped to the
// activation range 4 bytes at a time (SSUB8 + SEL).
template <typename Dots>
__attribute__((noinline)) void block_outputs(const Stage& stage, const int8_t* w, int32_t length,
                                             const Dots& dots, int32_t count, int32_t first_channel,
                                             int32_t channels, int8_t* out0, int8_t* out1) {
  const Stage s = stage;  // a local copy: output stores cannot alias it
  int32_t oc = 0;
  if (count == kPixels) {
    for (; oc + 2 <= channels; oc += 2, w += 2 * length) {
      int32_t sums[2][kPixels];
      dots.dot_2x2(w, length, sums);
      const Channel c0 = channel(s, first_channel + oc);
      const int32_t v00 = requantized(sums[0][0], c0, s), v01 = requantized(sums[0][1], c0, s);
      const Channel c1 = channel(s, first_channel + oc + 1);
      const int32_t v10 = requantized(sums[1][0], c1, s), v11 = requantized(sums[1][1], c1, s);
      // Channels oc, oc + 1 of pixel 0, then of pixel 1.
      const uint32_t bytes = clamped_bytes(v00, v10, v01, v11, s);
      const uint16_t pixel0 = static_cast<uint16_t>(bytes), pixel1 = static_cast<uint16_t>(bytes >> 16);
      std::memcpy(out0 + oc, &pixel0, 2);
      std::memcpy(out1 + oc, &pixel1, 2);
    }
  }
  for (; oc < channels; ++oc, w += length) {
    const Channel c = channel(s, first_channel + oc);
    out0[oc] = output_value(dots.dot_1x1(w, length, 0), c, s);
    if (count == kPixels) out1[oc] = output_value(dots.dot_1x1(w, length, 1), c, s);
  }
}

// Gathered windows take blocks of kGathered pixels and one filter row at a time: each quad of
// weights is widened once for 3 columns (per quad one LDR, 2 SXTB16, one LDM of the 3 columns'
// 6 words, 6 SMLADs: 10 instructions for 12 MACs).
constexpr int32_t kGathered = 3;

// sums[j]: filter row w against the 3 columns of a block (kGathered columns).
__attribute__((always_inline)) inline void dot_3x1(const int8_t* __restrict w, int32_t length,
                                                   const int16_t* __restrict block, int32_t (&sums)[kGathered]) {
  int32_t s0 = 0, s1 = 0, s2 = 0;
  const int16_t* c = block;
  const int32_t quads = length / 4;
#if defined(CORTEXM_EMULATE_DSP)
  for (int32_t i = 0; i < quads; ++i, c += 4 * kGathered, w += 4) {
    uint32_t x0, y0, x1, y1, x2, y2;
    load_pair(c, x0, y0);
    load_pair(c + 4, x1, y1);
    load_pair(c + 8, x2, y2);
    const uint32_t a = load_u32(w);
    const uint32_t even = sxtb16(a), odd = sxtb16_ror8(a);
    s0 = smlad(odd, y0, smlad(even, x0, s0));
    s1 = smlad(odd, y1, smlad(even, x1, s1));
    s2 = smlad(odd, y2, smlad(even, x2, s2));
  }
#else
  // LDM takes its registers in ascending order: the 6 column words are pinned to r0..r5.
  register uint32_t x0 __asm__("r0");
  register uint32_t y0 __asm__("r1");
  register uint32_t x1 __asm__("r2");
  register uint32_t y1 __asm__("r3");
  register uint32_t x2 __asm__("r4");
  register uint32_t y2 __asm__("r5");
  uint32_t v, t;
#define CORTEXM_DSP_QUAD3                                  \
  "ldr    %[v], [%[w]], #4\n\t"                            \
  "ldmia  %[c]!, {r0, r1, r2, r3, r4, r5}\n\t"             \
  "sxtb16 %[t], %[v]\n\t"                                  \
  "sxtb16 %[v], %[v], ror #8\n\t"                          \
  "smlad  %[s0], %[t], %[x0], %[s0]\n\t"                   \
  "smlad  %[s1], %[t], %[x1], %[s1]\n\t"                   \
  "smlad  %[s2], %[t], %[x2], %[s2]\n\t"                   \
  "smlad  %[s0], %[v], %[y0], %[s0]\n\t"                   \
  "smlad  %[s1], %[v], %[y1], %[s1]\n\t"                   \
  "smlad  %[s2], %[v], %[y2], %[s2]\n\t"
#define CORTEXM_DSP_QUAD3_OPERANDS                                                                   \
  [s0] "+r"(s0), [s1] "+r"(s1), [s2] "+r"(s2), [c] "+r"(c), [w] "+r"(w), [x0] "=&r"(x0), [y0] "=&r"(y0), \
      [x1] "=&r"(x1), [y1] "=&r"(y1), [x2] "=&r"(x2), [y2] "=&r"(y2), [v] "=&r"(v), [t] "=&r"(t)
  for (int32_t i = 0; i < quads % 4; ++i)
    __asm__ volatile(CORTEXM_DSP_QUAD3 : CORTEXM_DSP_QUAD3_OPERANDS : : "cc", "memory");
  if (quads >= 4) {
    const int8_t* const end = w + quads / 4 * 16;
    __asm__ volatile("1:\n\t" CORTEXM_DSP_QUAD3 CORTEXM_DSP_QUAD3 CORTEXM_DSP_QUAD3 CORTEXM_DSP_QUAD3
                     "ldr    %[t], %[end]\n\t"
                     "cmp    %[w], %[t]\n\t"
                     "bne    1b"
                     : CORTEXM_DSP_QUAD3_OPERANDS
                     : [end] "m"(end)
                     : "cc", "memory");
  }
#undef CORTEXM_DSP_QUAD3
#undef CORTEXM_DSP_QUAD3_OPERANDS
#endif
  const int32_t rest = length % 4;
  for (int32_t k = 0; k < rest; ++k) {
    const int32_t a = w[k];
    s0 = static_cast<int32_t>(wrap(s0) + wrap(c[k] * a));
    s1 = static_cast<int32_t>(wrap(s1) + wrap(c[rest + k] * a));
    s2 = static_cast<int32_t>(wrap(s2) + wrap(c[2 * rest + k] * a));
  }
  sums[0] = s0;
  sums[1] = s1;
  sums[2] = s2;
}

// The outputs of channels [first_channel, first_channel + channels) at the `count` (1 to 3)
// pixels of a gathered block (all 3 columns written); out[j] points at pixel j's first_channel.
__attribute__((noinline)) void gathered_outputs(const Stage& stage, const int8_t* w, int32_t length,
                                                const int16_t* block, int32_t count, int32_t first_channel,
                                                int32_t channels, int8_t* out0, int8_t* out1, int8_t* out2) {
  const Stage s = stage;  // a local copy: output stores cannot alias it
  for (int32_t oc = 0; oc < channels; ++oc, w += length) {
    int32_t sums[kGathered];
    dot_3x1(w, length, block, sums);
    const Channel c = channel(s, first_channel + oc);
    out0[oc] = output_value(sums[0], c, s);
    if (count > 1) out1[oc] = output_value(sums[1], c, s);
    if (count > 2) out2[oc] = output_value(sums[2], c, s);
  }
}

// A pointwise conv (stride 1, one group) written over its input from at least
// quantized_conv2d_in_place_lag bytes below it: per image, blocks of 2 pixels in raster order, each
// block's columns widened to the word after its outputs when they end at or below its input rows
// (else its rows read in place), so no store reaches a row still to be read.
__attribute__((noinline)) void pointwise_over_input(const Conv2dParams& p, const int8_t* input, const int8_t* filter,
                                                    const int32_t* bias, int8_t* output) {
  const ConvQuantParams q = p.quant;  // a local copy: output stores cannot alias it
  const int32_t offset = p.bias_includes_input_offset ? 0 : q.input_offset;
  const Stage stage = {bias, q.multipliers, q.shifts, q.output_offset, q.activation_min, q.activation_max,
                       splat8(q.activation_min), splat8(q.activation_max)};
  const int32_t in_c = p.input.c, out_c = p.filter.n, length = p.filter.c;
  const int64_t pixels = int64_t{p.output.h} * p.output.w;
  const size_t block_bytes = sizeof(int16_t) * kPixels * static_cast<size_t>(length);
  for (int64_t n = 0; n < p.output.n; ++n) {
    for (int64_t first = 0; first < pixels; first += kPixels) {
      const int32_t count = pixels - first < kPixels ? static_cast<int32_t>(pixels - first) : kPixels;
      const int8_t* row = input + (n * pixels + first) * in_c;
      int8_t* out0 = output + (n * pixels + first) * out_c;
      const uintptr_t at = (reinterpret_cast<uintptr_t>(out0 + int64_t{count} * out_c) + 3) & ~uintptr_t{3};
      if (at + block_bytes <= reinterpret_cast<uintptr_t>(row)) {
        int16_t* const columns = reinterpret_cast<int16_t*>(at);
        for (int32_t j = 0; j < count; ++j) widen_row(row + j * in_c, length, offset, columns, j);
        block_outputs(stage, filter, length, BlockColumns{columns}, count, 0, out_c, out0, out0 + out_c);
      } else {
        block_outputs(stage, filter, length, RowsInPlace{{row, count == kPixels ? row + in_c : row}, offset}, count,
                      0, out_c, out0, out0 + out_c);
      }
    }
  }
}

// Every other call: blocks of 2 pixels of each group, columns widened into scratch or the output's
// last bytes. Its own function, so that its registers are allocated as without the in-place case.
__attribute__((noinline)) void conv_blocks(const Conv2dParams& p, const int8_t* input, const int8_t* filter,
                                           const int32_t* bias, int8_t* output, void* scratch) {
  const bool pointwise = is_pointwise(p);
  const ConvQuantParams q = p.quant;  // a local copy: output stores cannot alias it
  // Added to every input tap, and the value of padded taps (Conv2dParams::bias_includes_input_offset).
  const bool folded = p.bias_includes_input_offset;
  const int32_t offset = folded ? 0 : q.input_offset;
  const int32_t pad = folded ? -q.input_offset : 0;
  const Stage stage = {bias, q.multipliers, q.shifts, q.output_offset, q.activation_min, q.activation_max,
                       splat8(q.activation_min), splat8(q.activation_max)};
  const int32_t groups = p.groups();
  const int32_t out_c = p.filter.n;
  const int32_t out_per_group = out_c / groups;
  const int32_t length = p.filter.h * p.filter.w * p.filter.c;
  const int32_t in_c = p.input.c;
  const int32_t out_w = p.output.w;
  const int32_t pixels = p.output.h * out_w;
  // Input bytes between horizontally and vertically adjacent pointwise pixels.
  const int32_t x_step = p.geometry.stride_w * in_c;
  const int32_t y_step = p.geometry.stride_h * p.input.w * in_c;
  // The block of columns: in scratch, or for a 1x1 window (2 columns) in the output's last bytes
  // (word-aligned) while no output has been written there.
  const size_t block_bytes = sizeof(int16_t) * kPixels * static_cast<size_t>(length);
  const uintptr_t output_begin = reinterpret_cast<uintptr_t>(output);
  const uintptr_t output_end = output_begin + static_cast<size_t>(p.output.n) * pixels * out_c;
  const uintptr_t staged_at = (output_end - block_bytes) & ~uintptr_t{3};
  bool staging = pointwise && output_end - output_begin >= block_bytes && staged_at >= output_begin;
  int16_t* const block = static_cast<int16_t*>(staging ? reinterpret_cast<void*>(staged_at) : scratch);
  int32_t gathering = 0;  // the pixel gather_column writes: its "column" pointer is only an index base
  // Runs shorter than kShortRun taps (a first conv's few input channels) one tap at a time, inline:
  // the calls cost more than they save there.
  constexpr int32_t kShortRun = 12;
  const auto fill = [&](int16_t* at, int32_t count) {
    if (count > 0) fill_taps(block, kGathered, length, gathering, static_cast<int32_t>(at - block), count, pad);
  };
  const auto copy = [&](const int8_t* src, int32_t count, int16_t* at) {
    const int32_t first = static_cast<int32_t>(at - block);
    if (count < kShortRun)
      put_taps(block, kGathered, length, gathering, first, count, [src, offset](int32_t i) { return src[i] + offset; });
    else
      copy_taps(block, kGathered, length, gathering, first, count, src, offset);
  };

  for (int32_t n = 0; n < p.input.n; ++n) {
    const int8_t* image = input + int64_t{n} * p.input.h * p.input.w * in_c;
    int8_t* out_image = output + int64_t{n} * pixels * out_c;
    for (int32_t group = 0; group < groups; ++group) {
      const int8_t* group_filter = filter + int64_t{group} * out_per_group * length;
      const int32_t first_oc = group * out_per_group;
      int32_t oy = 0, ox = 0;  // the next pixel to gather
      const int8_t* row = image + group * length;
      const int8_t* row_start = row;
      // The last pixel whose block may be staged: its outputs end at or before staged_at.
      ptrdiff_t last_staged = -1;
      const ptrdiff_t room = static_cast<ptrdiff_t>(staged_at) -
                             reinterpret_cast<ptrdiff_t>(out_image + first_oc + out_per_group);
      if (staging && room >= 0) last_staged = room / out_c;
      const auto next_pixel = [&] {
        row += x_step;
        if (++ox == out_w) {
          ox = 0;
          ++oy;
          row_start += y_step;
          row = row_start;
        }
      };
      if (!pointwise) {
        // Blocks of 3 pixels; the last block's missing columns repeat its last pixel.
        for (int32_t first = 0; first < pixels; first += kGathered) {
          const int32_t count = pixels - first < kGathered ? pixels - first : kGathered;
          for (gathering = 0; gathering < kGathered; ++gathering) {
            gather_column(p, image, group, oy, ox, block, fill, copy);
            if (gathering + 1 < count) next_pixel();
          }
          if (first + count < pixels) next_pixel();
          int8_t* out0 = out_image + first * out_c + first_oc;
          int8_t* out1 = count > 1 ? out0 + out_c : out0;
          gathered_outputs(stage, group_filter, length, block, count, first_oc, out_per_group, out0, out1,
                           count > 2 ? out1 + out_c : out0);
        }
        continue;
      }
      for (int32_t first = 0; first < pixels; first += kPixels) {
        const int32_t count = pixels - first < kPixels ? pixels - first : kPixels;
        int8_t* out0 = out_image + first * out_c + first_oc;
        if (first + count - 1 > last_staged) staging = false;  // for good: its outputs reach the block
        if (pointwise && !staging) {
          const int8_t* row0 = row;
          next_pixel();
          const int8_t* row1 = count == kPixels ? row : row0;
          if (count == kPixels) next_pixel();
          block_outputs(stage, group_filter, length, RowsInPlace{{row0, row1}, offset}, count, first_oc,
                        out_per_group, out0, out0 + out_c);
          continue;
        }
        for (int32_t j = 0; j < count; ++j) {
          widen_row(row, length, offset, block, j);
          next_pixel();
        }
        block_outputs(stage, group_filter, length, BlockColumns{block}, count, first_oc, out_per_group, out0,
                      out0 + out_c);
      }
    }
  }
}

}  // namespace

void quantized_conv2d(const Conv2dParams& p, const int8_t* input, const int8_t* filter,
                      const int32_t* bias, int8_t* output, void* scratch) {
  const uintptr_t in = reinterpret_cast<uintptr_t>(input), out = reinterpret_cast<uintptr_t>(output);
  const bool overlap = out < in + static_cast<size_t>(p.input.elements()) && in < out + static_cast<size_t>(p.output.elements());
  if (overlap && is_pointwise(p) && p.groups() == 1 && p.geometry.stride_h == 1 && p.geometry.stride_w == 1)
    pointwise_over_input(p, input, filter, bias, output);
  else
    conv_blocks(p, input, filter, bias, output, scratch);
}

}  // namespace cortexm::dsp

#endif  // CORTEXM_BUILT_ISA == 1
