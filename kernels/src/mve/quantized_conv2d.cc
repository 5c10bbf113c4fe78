// MVE variant of quantized_conv2d. Columns stay int8: padded taps hold -input_offset (so that
// x + input_offset is 0 there), and sum (x + off) * w = sum x * w + off * sum w modulo 2^32 like
// the reference's adds; with bias_includes_input_offset the bias already holds off * sum w,
// otherwise each filter row's sum is taken once per call. A 1x1 window without padding reads the
// input rows in place (a matrix multiply over pixels); other windows gather up to 4 columns into
// scratch (DLSTP / LETP copies; a window inside the image one copy per kernel row, a block in one
// output row with all its windows inside without per-pixel window arithmetic). Blocks of up to 4
// pixels in raster order; per block, by filter row length (taps):
// - at most 16: the columns stay in registers across the channels, one load and up to 4
//   VMLADAV per channel, the block's pixels of one channel requantized together and scattered;
// - bias folded, 17-64: a pixel's column stays in 2-4 registers (two pixels' at 17-32), the
//   output channels pass 4 at a time (2 * chunks + 1 instructions per channel and pixel; 7 per
//   channel of 2 pixels at 17-32), their sums requantized as one vector (lanes = channels);
// - bias folded, longer: 2 pixels x 3 channels per pass over the rows (mve_block_dots.h, 11
//   instructions per 96 MACs), each pixel's 3 sums requantized as one vector;
// - bias not folded, longer than 16: per filter row one tail-predicated loop over the block's
//   columns (mve_dots.h: 10 instructions per 16 taps of 4 columns), a last block of 1-3 pixels
//   taking 1-3 columns, the pixels of one channel requantized together and scattered.
// Written over its input (quantized_conv2d_in_place_lag), a block's stores land only on the rows
// of the blocks before it.
#include "variants.h"

#if CORTEXM_BUILT_ISA == 2

#include "conv_window.h"
#include "mve/mve_block_dots.h"
#include "mve/mve_dots.h"
#include "mve/mve_ops.h"

namespace cortexm::mve {

namespace {

constexpr int32_t kBlockPixels = 4;

// The window gather's short runs: tail-predicated low-overhead loops (DLSTP.8 / LETP), 3
// instructions per 16 bytes copied, 2 per 16 filled, no library calls. Inline assembly: GCC 12
// materializes each VCTP predicate through VMRS / VMSR and emits no low-overhead loops.
inline void fill_bytes(int8_t* dst, int8_t value, int32_t count) {
  if (count <= 0) return;
  __asm__ volatile(
      "   vdup.8      q0, %[value]\n"
      "   dlstp.8     lr, %[n]\n"
      "1: vstrb.8     q0, [%[dst]], #16\n"
      "   letp        lr, 1b\n"
      : [dst] "+r"(dst)
      : [value] "r"(static_cast<int32_t>(value)), [n] "r"(count)
      : "q0", "memory", "lr");
}

inline void copy_bytes(const int8_t* src, int32_t count, int8_t* dst) {
  if (count <= 0) return;
  __asm__ volatile(
      "   dlstp.8     lr, %[n]\n"
      "1: vldrb.8     q0, [%[src]], #16\n"
      "   vstrb.8     q0, [%[dst]], #16\n"
      "   letp        lr, 1b\n"
      : [src] "+r"(src), [dst] "+r"(dst)
      : [n] "r"(count)
      : "q0", "memory", "lr");
}

// Adds the channel's constant to its N sums, requantizes them as one vector and scatters them.
template <int N>
inline void finish(const ConvQuantParams& q, int32_t oc, const int32_t* sums, int32_t constant,
                   int8_t* out_block, uint32x4_t scatter) {
  int32x4_t acc = vdupq_n_s32(sums[0]);
  if (N > 1) acc = vsetq_lane_s32(sums[1], acc, 1);
  if (N > 2) acc = vsetq_lane_s32(sums[2], acc, 2);
  if (N > 3) acc = vsetq_lane_s32(sums[3], acc, 3);
  acc = vaddq_n_s32(acc, constant);
  acc = requantize(acc, q.multipliers[oc], q.shifts[oc]);
  acc = offset_and_clamp(acc, q.output_offset, q.activation_min, q.activation_max);
  if (N == 4) {
    vstrbq_scatter_offset_s32(out_block + oc, scatter, acc);
  } else {
    vstrbq_scatter_offset_p_s32(out_block + oc, scatter, acc, vctp32q(N));
  }
}

// The channel's bias; unfolded, plus input_offset * (sum of its filter row).
template <bool Folded>
inline int32_t channel_constant(const ConvQuantParams& q, const int32_t* bias, int32_t oc,
                                const int8_t* row, int32_t length) {
  const uint32_t b = bias ? static_cast<uint32_t>(bias[oc]) : 0u;
  if (Folded) return static_cast<int32_t>(b);
  return static_cast<int32_t>(b + static_cast<uint32_t>(q.input_offset) *
                                      static_cast<uint32_t>(byte_sum(row, length)));
}

// Output channels [oc_begin, oc_end) of a block of N pixels (columns): per channel one pass of its
// filter row over the N columns, the N sums requantized as one vector and scattered. Folded: the
// bias holds input_offset * (sum of the row) already.
template <int N, bool Folded>
__attribute__((noinline)) void channels(const Conv2dParams& p, const int8_t* filter, const int32_t* bias,
              const int8_t* const* column, int32_t oc_begin, int32_t oc_end, int8_t* out_block,
              uint32x4_t scatter) {
  const ConvQuantParams q = p.quant;
  const int32_t length = p.filter.h * p.filter.w * p.filter.c;
  for (int32_t oc = oc_begin; oc < oc_end; ++oc) {
    const int8_t* row = filter + int64_t{oc} * length;
    int32_t sums[4] = {0, 0, 0, 0};
    dot_rows<N>(row, column, length, sums);
    finish<N>(q, oc, sums, channel_constant<Folded>(q, bias, oc, row, length), out_block, scatter);
  }
}

// channels() for columns of at most 16 taps: they stay in vector registers for all the channels,
// one load and N VMLADAV per channel.
template <int N, bool Folded>
__attribute__((noinline)) void short_channels(const Conv2dParams& p, const int8_t* filter, const int32_t* bias,
                    const int8_t* const* column, int32_t oc_begin, int32_t oc_end,
                    int8_t* out_block, uint32x4_t scatter) {
  const ConvQuantParams q = p.quant;
  const int32_t length = p.filter.h * p.filter.w * p.filter.c;
  const mve_pred16_t lanes = vctp8q(static_cast<uint32_t>(length));
  int8x16_t c[N];
  for (int32_t j = 0; j < N; ++j) c[j] = vldrbq_z_s8(column[j], lanes);
  for (int32_t oc = oc_begin; oc < oc_end; ++oc) {
    const int8_t* row = filter + int64_t{oc} * length;
    const int8x16_t w = vldrbq_z_s8(row, lanes);
    int32_t sums[4] = {0, 0, 0, 0};
    for (int32_t j = 0; j < N; ++j) sums[j] = vmladavq_s8(c[j], w);
    finish<N>(q, oc, sums, channel_constant<Folded>(q, bias, oc, row, length), out_block, scatter);
  }
}

// What a folded block needs, loaded once per call: the assembly of mve_block_dots.h takes every
// general register and clobbers memory, so what lives across it is in vector registers (the
// clamp) or reloaded from the stack (this struct), not from the params.
struct FoldedLayer {
  const int8_t* filter;
  const int32_t* bias;
  const int32_t* multipliers;
  const int32_t* shifts;
  int32_t length, out_c;
};

// Output channels [oc, oc + C) of P pixels (columns), the bias folded: the accumulators start at
// the bias, one pass of the C filter rows over the P columns (mve_block_dots.h), then per pixel
// its C sums requantized as one vector (lanes = channels) and stored to its C output bytes.
template <int P, int C>
inline void folded_block(const FoldedLayer& l, int32_t oc, const int8_t* const* column, int8_t* out,
                         int32x4_t offset, int32x4_t lo, int32x4_t hi) {
  int32_t acc[P][C];
  for (int32_t c = 0; c < C; ++c) {
    const int32_t b = l.bias ? l.bias[oc + c] : 0;
    for (int32_t j = 0; j < P; ++j) acc[j][c] = b;
  }
  BlockDots<P, C>::run(column[0], column[P - 1], l.filter + int64_t{oc} * l.length, l.length, acc);
  const mve_pred16_t lanes = vctp32q(C);
  const int32x4_t multipliers = vldrwq_z_s32(l.multipliers + oc, lanes);
  const int32x4_t shifts = vldrwq_z_s32(l.shifts + oc, lanes);
  for (int32_t j = 0; j < P; ++j) {
    int32x4_t v = vdupq_n_s32(acc[j][0]);
    if (C > 1) v = vsetq_lane_s32(acc[j][C > 1 ? 1 : 0], v, 1);
    if (C > 2) v = vsetq_lane_s32(acc[j][C > 2 ? 2 : 0], v, 2);
    v = vaddq_s32(requantize(v, multipliers, shifts), offset);
    vstrbq_p_s32(out + j * l.out_c + oc, vminq_s32(vmaxq_s32(v, lo), hi), lanes);
  }
}

// Long rows with the bias folded, output channels [oc_begin, oc_end) of P pixels (1 or 2) at
// `out` (pixel j at out + j * out_c): blocks of 3 channels (11 instructions per 16 taps of 2
// pixels), the last 4, 2 or 1 in blocks of 2 and 1.
template <int P>
__attribute__((noinline)) void folded_channels(const Conv2dParams& p, const int8_t* filter,
                                               const int32_t* bias, const int8_t* const* column,
                                               int32_t oc_begin, int32_t oc_end, int8_t* out) {
  const ConvQuantParams& q = p.quant;
  const FoldedLayer l{filter, bias, q.multipliers, q.shifts, p.filter.h * p.filter.w * p.filter.c,
                      p.filter.n};
  const int8_t* const columns[2] = {column[0], column[P - 1]};
  const int32x4_t offset = vdupq_n_s32(q.output_offset);
  const int32x4_t lo = vdupq_n_s32(q.activation_min), hi = vdupq_n_s32(q.activation_max);
  int32_t oc = oc_begin;
  for (; oc_end - oc >= 3 && oc_end - oc != 4; oc += 3)
    folded_block<P, 3>(l, oc, columns, out, offset, lo, hi);
  for (; oc_end - oc >= 2; oc += 2) folded_block<P, 2>(l, oc, columns, out, offset, lo, hi);
  if (oc < oc_end) folded_block<P, 1>(l, oc, columns, out, offset, lo, hi);
}

// The largest row, in 16-byte chunks, that resident_column_channels keeps in registers.
constexpr int32_t kMaxResidentChunks = 4;

// Dot products of a column held in K vector registers c0..c(K-1) with filter rows `n` bytes apart
// from `p` (which advances past them): per row K loads and K VMLADAV(A), the last chunk the 16
// bytes that end the row (the column's register holds zeros in the lanes of taps the chunks
// before took), so no load reads past a row. Inline assembly: from intrinsics GCC 12 spills the
// column to the stack. Four rows: their sums moved into one vector by two VMOVs (lanes = rows).
// LR is clobbered so that no sum lands in it: GCC's "Te" (even registers) includes LR, which
// VMLADAV's RdaLo = 7 does not name.
#define CORTEXM_CHUNK0(s) \
  "   vldrb.8     %q[w], [%[p]]\n   vmladav.s8  %[" s "], %q[c0], %q[w]\n"
#define CORTEXM_CHUNK(s, c, off) \
  "   vldrb.8     %q[w], [%[p], #" #off "]\n   vmladava.s8 %[" s "], %q[" c "], %q[w]\n"
#define CORTEXM_NEXT_ROW "   add         %[p], %[p], %[n]\n"
#define CORTEXM_ROW2(s) CORTEXM_CHUNK0(s) CORTEXM_NEXT_ROW CORTEXM_CHUNK(s, "c1", -16)
#define CORTEXM_ROW3(s) \
  CORTEXM_CHUNK0(s) CORTEXM_CHUNK(s, "c1", 16) CORTEXM_NEXT_ROW CORTEXM_CHUNK(s, "c2", -16)
#define CORTEXM_ROW4(s)                                                          \
  CORTEXM_CHUNK0(s) CORTEXM_CHUNK(s, "c1", 16) CORTEXM_CHUNK(s, "c2", 32) \
  CORTEXM_NEXT_ROW CORTEXM_CHUNK(s, "c3", -16)
#define CORTEXM_COLUMNS2 [c0] "w"(c[0]), [c1] "w"(c[1])
#define CORTEXM_COLUMNS3 CORTEXM_COLUMNS2, [c2] "w"(c[2])
#define CORTEXM_COLUMNS4 CORTEXM_COLUMNS3, [c3] "w"(c[3])

template <int K>
struct ResidentRows;

#define CORTEXM_RESIDENT_ROWS(K)                                                                   \
  template <>                                                                                      \
  struct ResidentRows<K> {                                                                         \
    static inline int32_t one(const int8x16_t (&c)[K], const int8_t*& p, int32_t n) {             \
      int32_t s0;                                                                                  \
      int8x16_t w;                                                                                 \
      __asm__(CORTEXM_ROW##K("s0")                                                                 \
              : [p] "+r"(p), [s0] "=&Te"(s0), [w] "=&w"(w)                                         \
              : [n] "r"(n), CORTEXM_COLUMNS##K                                                     \
              : "memory", "lr");                                                                   \
      return s0;                                                                                   \
    }                                                                                              \
    static inline int32x4_t four(const int8x16_t (&c)[K], const int8_t*& p, int32_t n) {          \
      int32_t s0, s1, s2, s3;                                                                      \
      int8x16_t w;                                                                                 \
      int32x4_t v;                                                                                 \
      __asm__(CORTEXM_ROW##K("s0") CORTEXM_ROW##K("s1") CORTEXM_ROW##K("s2") CORTEXM_ROW##K("s3")  \
              "   vmov        %q[v][2], %q[v][0], %[s0], %[s2]\n"                                  \
              "   vmov        %q[v][3], %q[v][1], %[s1], %[s3]\n"                                  \
              : [p] "+r"(p), [s0] "=&Te"(s0), [s1] "=&Te"(s1), [s2] "=&Te"(s2), [s3] "=&Te"(s3),   \
                [w] "=&w"(w), [v] "=&w"(v)                                                         \
              : [n] "r"(n), CORTEXM_COLUMNS##K                                                     \
              : "memory", "lr");                                                                   \
      return v;                                                                                    \
    }                                                                                              \
  };
CORTEXM_RESIDENT_ROWS(2)
CORTEXM_RESIDENT_ROWS(3)
CORTEXM_RESIDENT_ROWS(4)
#undef CORTEXM_RESIDENT_ROWS

// Rows of 17-32 taps, two pixels (columns c0 c1 and d0 d1): four rows' dot products with both,
// each row's 2 chunks loaded once for the two (7 instructions per row), the sums of pixel 0 into
// lanes of v0, of pixel 1 into v1 (lanes = rows). Rows 0 and 2, then 1 and 3, from two pointers:
// a two-lane VMOV fills lanes 0 and 2 (the first register into lane 0), or 1 and 3.
#define CORTEXM_PAIR_ROW(ptr)                                       \
  "   vldrb.8     %q[w], [%[" ptr "]]\n"                             \
  "   vmladav.s8  %[s0], %q[c0], %q[w]\n"                            \
  "   vmladav.s8  %[t0], %q[d0], %q[w]\n"                            \
  "   add         %[" ptr "], %[" ptr "], %[n]\n"                    \
  "   vldrb.8     %q[w], [%[" ptr "], #-16]\n"                       \
  "   vmladava.s8 %[s0], %q[c1], %q[w]\n"                            \
  "   vmladava.s8 %[t0], %q[d1], %q[w]\n"
#define CORTEXM_PAIR_ROW2(ptr)                                      \
  "   vldrb.8     %q[w], [%[" ptr "]]\n"                             \
  "   vmladav.s8  %[s2], %q[c0], %q[w]\n"                            \
  "   vmladav.s8  %[t2], %q[d0], %q[w]\n"                            \
  "   add         %[" ptr "], %[" ptr "], %[n]\n"                    \
  "   vldrb.8     %q[w], [%[" ptr "], #-16]\n"                       \
  "   vmladava.s8 %[s2], %q[c1], %q[w]\n"                            \
  "   vmladava.s8 %[t2], %q[d1], %q[w]\n"
inline void resident_pair_four(const int8x16_t (&c)[2], const int8x16_t (&d)[2], const int8_t*& p,
                               int32_t n, int32x4_t& v0, int32x4_t& v1) {
  const int8_t* p2;
  int32_t s0, s2, t0, t2;
  int8x16_t w;
  __asm__("   add         %[p2], %[p], %[n], lsl #1\n"
          CORTEXM_PAIR_ROW("p") CORTEXM_PAIR_ROW2("p2")
          "   vmov        %q[v0][2], %q[v0][0], %[s0], %[s2]\n"
          "   vmov        %q[v1][2], %q[v1][0], %[t0], %[t2]\n"
          CORTEXM_PAIR_ROW("p") CORTEXM_PAIR_ROW2("p2")
          "   vmov        %q[v0][3], %q[v0][1], %[s0], %[s2]\n"
          "   vmov        %q[v1][3], %q[v1][1], %[t0], %[t2]\n"
          "   mov         %[p], %[p2]\n"
          : [p] "+r"(p), [p2] "=&r"(p2), [s0] "=&Te"(s0), [s2] "=&Te"(s2), [t0] "=&Te"(t0),
            [t2] "=&Te"(t2), [w] "=&w"(w), [v0] "=&w"(v0), [v1] "=&w"(v1)
          : [n] "r"(n), [c0] "w"(c[0]), [c1] "w"(c[1]), [d0] "w"(d[0]), [d1] "w"(d[1])
          : "memory", "lr");
}
#undef CORTEXM_PAIR_ROW
#undef CORTEXM_PAIR_ROW2
#undef CORTEXM_COLUMNS2
#undef CORTEXM_COLUMNS3
#undef CORTEXM_COLUMNS4
#undef CORTEXM_ROW2
#undef CORTEXM_ROW3
#undef CORTEXM_ROW4
#undef CORTEXM_NEXT_ROW
#undef CORTEXM_CHUNK
#undef CORTEXM_CHUNK0

// Rows of 16 * (K - 1) + 1 to 16 * K taps with the bias folded, one pixel: its column stays in K
// vector registers while the output channels [oc_begin, oc_end) pass 4 at a time (ResidentRows:
// 2 * K + 1 instructions per channel), the 4 sums requantized as one vector (lanes = channels,
// their own multipliers and shifts) and stored to 4 consecutive output bytes.
template <int K>
__attribute__((noinline)) void resident_column_channels(const Conv2dParams& p, const int8_t* filter,
                                                        const int32_t* bias, const int8_t* column,
                                                        int32_t oc_begin, int32_t oc_end, int8_t* out) {
  const ConvQuantParams& q = p.quant;
  const int32_t length = p.filter.h * p.filter.w * p.filter.c;
  // The last chunk: the column's 16 bytes that end it, the lanes of taps already taken zeroed.
  const uint32_t taken = static_cast<uint32_t>(16 * K - length);
  int8x16_t c[K];
  for (int32_t k = 0; k < K - 1; ++k) c[k] = vld1q_s8(column + 16 * k);
  c[K - 1] = vldrbq_z_s8(column + length - 16, vpnot(vctp8q(taken)));
  const int32x4_t offset = vdupq_n_s32(q.output_offset);
  const int32x4_t lo = vdupq_n_s32(q.activation_min), hi = vdupq_n_s32(q.activation_max);
  const int8_t* row = filter + int64_t{oc_begin} * length;
  // In registers across the assembly, which clobbers memory (not reloaded from the params).
  const int32_t* multipliers = q.multipliers;
  const int32_t* shifts = q.shifts;
  const int32_t output_offset = q.output_offset;
  int32_t oc = oc_begin;
  for (; oc_end - oc >= 4; oc += 4) {
    int32x4_t v = ResidentRows<K>::four(c, row, length);
    if (bias) v = vaddq_s32(v, vld1q_s32(bias + oc));
    v = requantize(v, vld1q_s32(multipliers + oc), vld1q_s32(shifts + oc));
    vstrbq_s32(out + oc, vminq_s32(vmaxq_s32(vaddq_n_s32(v, output_offset), lo), hi));
  }
  if (oc == oc_end) return;
  const int32_t count = oc_end - oc;
  int32_t sums[4] = {0, 0, 0, 0};
  for (int32_t i = 0; i < count; ++i) sums[i] = ResidentRows<K>::one(c, row, length);
  const mve_pred16_t lanes = vctp32q(static_cast<uint32_t>(count));
  int32x4_t v = vld1q_s32(sums);
  if (bias) v = vaddq_s32(v, vldrwq_z_s32(bias + oc, lanes));
  v = requantize(v, vldrwq_z_s32(q.multipliers + oc, lanes), vldrwq_z_s32(q.shifts + oc, lanes));
  vstrbq_p_s32(out + oc, vminq_s32(vmaxq_s32(vaddq_s32(v, offset), lo), hi), lanes);
}

// resident_column_channels<2> for two pixels (columns a and b, outputs out_a and out_b): each
// filter chunk loaded once for both (resident_pair_four).
__attribute__((noinline)) void resident_pair_channels(const Conv2dParams& p, const int8_t* filter,
                                                      const int32_t* bias, const int8_t* a,
                                                      const int8_t* b, int32_t oc_begin,
                                                      int32_t oc_end, int8_t* out_a, int8_t* out_b) {
  const ConvQuantParams& q = p.quant;
  const int32_t length = p.filter.h * p.filter.w * p.filter.c;
  const mve_pred16_t last = vpnot(vctp8q(static_cast<uint32_t>(32 - length)));
  const int8x16_t c[2] = {vld1q_s8(a), vldrbq_z_s8(a + length - 16, last)};
  const int8x16_t d[2] = {vld1q_s8(b), vldrbq_z_s8(b + length - 16, last)};
  const int32x4_t lo = vdupq_n_s32(q.activation_min), hi = vdupq_n_s32(q.activation_max);
  const int8_t* row = filter + int64_t{oc_begin} * length;
  const int32_t* multipliers = q.multipliers;
  const int32_t* shifts = q.shifts;
  const int32_t output_offset = q.output_offset;
  int32_t oc = oc_begin;
  for (; oc_end - oc >= 4; oc += 4) {
    int32x4_t va, vb;
    resident_pair_four(c, d, row, length, va, vb);
    if (bias) {
      const int32x4_t channel_bias = vld1q_s32(bias + oc);
      va = vaddq_s32(va, channel_bias);
      vb = vaddq_s32(vb, channel_bias);
    }
    const int32x4_t m = vld1q_s32(multipliers + oc), sh = vld1q_s32(shifts + oc);
    va = requantize(va, m, sh);
    vb = requantize(vb, m, sh);
    vstrbq_s32(out_a + oc, vminq_s32(vmaxq_s32(vaddq_n_s32(va, output_offset), lo), hi));
    vstrbq_s32(out_b + oc, vminq_s32(vmaxq_s32(vaddq_n_s32(vb, output_offset), lo), hi));
  }
  if (oc == oc_end) return;
  const int32_t count = oc_end - oc;
  const mve_pred16_t lanes = vctp32q(static_cast<uint32_t>(count));
  const int32x4_t channel_bias = bias ? vldrwq_z_s32(bias + oc, lanes) : vdupq_n_s32(0);
  const int32x4_t m = vldrwq_z_s32(multipliers + oc, lanes), sh = vldrwq_z_s32(shifts + oc, lanes);
  const auto last_channels = [&](const int8x16_t(&column)[2], int8_t* out) {
    const int8_t* r = row;
    int32_t sums[4] = {0, 0, 0, 0};
    for (int32_t i = 0; i < count; ++i) sums[i] = ResidentRows<2>::one(column, r, length);
    const int32x4_t v = requantize(vaddq_s32(vld1q_s32(sums), channel_bias), m, sh);
    vstrbq_p_s32(out + oc, vminq_s32(vmaxq_s32(vaddq_n_s32(v, output_offset), lo), hi), lanes);
  };
  last_channels(c, out_a);
  last_channels(d, out_b);
}

// Paths: the Conv2dPath bits whose code is built (a call on another path writes nothing).
template <bool Folded, uint32_t Paths>
void block_channels(int32_t count, const Conv2dParams& p, const int8_t* filter,
                    const int32_t* bias, const int8_t* const* column, int32_t oc_begin,
                    int32_t oc_end, int8_t* out_block, uint32x4_t scatter) {
  if (p.filter.h * p.filter.w * p.filter.c <= 16) {
    if constexpr ((Paths & kConv2dShortRows) == 0) return;
    switch (count) {
      case 1: short_channels<1, Folded>(p, filter, bias, column, oc_begin, oc_end, out_block, scatter); break;
      case 2: short_channels<2, Folded>(p, filter, bias, column, oc_begin, oc_end, out_block, scatter); break;
      case 3: short_channels<3, Folded>(p, filter, bias, column, oc_begin, oc_end, out_block, scatter); break;
      default: short_channels<4, Folded>(p, filter, bias, column, oc_begin, oc_end, out_block, scatter); break;
    }
    return;
  }
  if constexpr ((Paths & kConv2dLongRows) == 0) return;
  if constexpr (Folded) {
    const int32_t length = p.filter.h * p.filter.w * p.filter.c;
    if (length <= 16 * kMaxResidentChunks) {
      int32_t j = 0;
      if (length <= 32)
        for (; j + 2 <= count; j += 2)
          resident_pair_channels(p, filter, bias, column[j], column[j + 1], oc_begin, oc_end,
                                 out_block + j * p.filter.n, out_block + (j + 1) * p.filter.n);
      for (; j < count; ++j) {
        int8_t* out = out_block + j * p.filter.n;
        switch ((length + 15) / 16) {
          case 2: resident_column_channels<2>(p, filter, bias, column[j], oc_begin, oc_end, out); break;
          case 3: resident_column_channels<3>(p, filter, bias, column[j], oc_begin, oc_end, out); break;
          default: resident_column_channels<4>(p, filter, bias, column[j], oc_begin, oc_end, out); break;
        }
      }
      return;
    }
    for (int32_t j = 0; j < count; j += 2) {
      if (count - j >= 2) {
        folded_channels<2>(p, filter, bias, column + j, oc_begin, oc_end, out_block + j * p.filter.n);
      } else {
        folded_channels<1>(p, filter, bias, column + j, oc_begin, oc_end, out_block + j * p.filter.n);
      }
    }
    return;
  }
  switch (count) {
    case 1: channels<1, Folded>(p, filter, bias, column, oc_begin, oc_end, out_block, scatter); break;
    case 2: channels<2, Folded>(p, filter, bias, column, oc_begin, oc_end, out_block, scatter); break;
    case 3: channels<3, Folded>(p, filter, bias, column, oc_begin, oc_end, out_block, scatter); break;
    default: channels<4, Folded>(p, filter, bias, column, oc_begin, oc_end, out_block, scatter); break;
  }
}

}  // namespace

template <uint32_t Paths>
void quantized_conv2d_on_paths(const Conv2dParams& p, const int8_t* input, const int8_t* filter,
                               const int32_t* bias, int8_t* output, void* scratch) {
  const bool pointwise = is_pointwise(p);
  const ConvQuantParams q = p.quant;
  const bool folded = p.bias_includes_input_offset;
  const int32_t groups = p.groups();
  const int32_t out_c = p.filter.n;
  const int32_t out_per_group = out_c / groups;
  const int32_t length = p.filter.h * p.filter.w * p.filter.c;
  const int32_t out_w = p.output.w;
  const int32_t pixels = p.output.h * out_w;
  int8_t* columns = static_cast<int8_t*>(scratch);
  const int8_t pad = static_cast<int8_t>(-q.input_offset);
  const auto fill = [pad](int8_t* dst, int32_t count) { fill_bytes(dst, pad, count); };
  // Windows inside the image whose kernel rows are contiguous in the input (one group, no
  // horizontal dilation) are gathered by one copy per kernel row: top-left corners (y0, x0) with
  // 0 <= y0 <= last_y0 and 0 <= x0 <= last_x0.
  const bool contiguous_rows = groups == 1 && p.geometry.dilation_w == 1;
  const int32_t last_y0 = p.input.h - 1 - (p.filter.h - 1) * p.geometry.dilation_h;
  const int32_t last_x0 = p.input.w - p.filter.w;
  const int32_t row_length = p.filter.w * p.input.c;
  const int64_t row_step = int64_t{p.geometry.dilation_h} * p.input.w * p.input.c;
  // Byte offsets of the 4 pixels of one output channel in the output.
  const uint32x4_t scatter = vmulq_n_u32(vidupq_n_u32(0, 1), static_cast<uint32_t>(out_c));

  for (int32_t n = 0; n < p.input.n; ++n) {
    const int8_t* image = input + int64_t{n} * p.input.h * p.input.w * p.input.c;
    int8_t* out_image = output + int64_t{n} * pixels * out_c;
    for (int32_t group = 0; group < groups; ++group) {
      for (int32_t first = 0; first < pixels; first += kBlockPixels) {
        const int32_t count = pixels - first < kBlockPixels ? pixels - first : kBlockPixels;
        // The block's output channels of this group from its columns.
        const auto block_channels_for = [&](int32_t pixel_count, const int8_t* const* block_columns) {
          int8_t* out_block = out_image + int64_t{first} * out_c;
          const int32_t oc_begin = group * out_per_group, oc_end = oc_begin + out_per_group;
          if (folded) {
            if constexpr ((Paths & kConv2dFoldedBias) != 0)
              block_channels<true, Paths>(pixel_count, p, filter, bias, block_columns, oc_begin, oc_end,
                                          out_block, scatter);
          } else {
            if constexpr ((Paths & kConv2dUnfoldedBias) != 0)
              block_channels<false, Paths>(pixel_count, p, filter, bias, block_columns, oc_begin, oc_end,
                                           out_block, scatter);
          }
        };
        const int8_t* column[kBlockPixels];
        if (!pointwise && contiguous_rows) {
          // A block in one output row whose windows all lie inside the image: kernel-row copies
          // from input pixels stride_w apart, no per-pixel window arithmetic.
          const int32_t oy = first / out_w, ox = first - oy * out_w;
          const int64_t y0 = int64_t{oy} * p.geometry.stride_h - p.geometry.padding.top;
          const int64_t x0 = int64_t{ox} * p.geometry.stride_w - p.geometry.padding.left;
          const int64_t x_last = x0 + int64_t{count - 1} * p.geometry.stride_w;
          if (ox + count <= out_w && y0 >= 0 && y0 <= last_y0 && x0 >= 0 && x_last <= last_x0) {
            const int8_t* src = image + (y0 * p.input.w + x0) * p.input.c;
            const int64_t pixel_step = int64_t{p.geometry.stride_w} * p.input.c;
            const int32_t kernel_h = p.filter.h;
            for (int32_t j = 0; j < count; ++j, src += pixel_step) {
              int8_t* dst = columns + j * length;
              const int8_t* row = src;
              for (int32_t kh = 0; kh < kernel_h; ++kh, row += row_step, dst += row_length)
                copy_bytes(row, row_length, dst);
              column[j] = columns + j * length;
            }
            block_channels_for(count, column);
            continue;
          }
        }
        for (int32_t j = 0; j < count; ++j) {
          const int32_t oy = (first + j) / out_w, ox = (first + j) % out_w;
          if (pointwise) {
            const int64_t iy = int64_t{oy} * p.geometry.stride_h;
            const int64_t ix = int64_t{ox} * p.geometry.stride_w;
            column[j] = image + (iy * p.input.w + ix) * p.input.c + int64_t{group} * length;
          } else {
            int8_t* dst = columns + j * length;
            const int64_t y0 = int64_t{oy} * p.geometry.stride_h - p.geometry.padding.top;
            const int64_t x0 = int64_t{ox} * p.geometry.stride_w - p.geometry.padding.left;
            if (contiguous_rows && y0 >= 0 && y0 <= last_y0 && x0 >= 0 && x0 <= last_x0) {
              // The window inside the image: one copy per kernel row.
              const int8_t* src = image + (y0 * p.input.w + x0) * p.input.c;
              for (int32_t kh = 0; kh < p.filter.h; ++kh, src += row_step)
                copy_bytes(src, row_length, dst + kh * row_length);
            } else {
              gather_column(p, image, group, oy, ox, dst, fill, copy_bytes);
            }
            column[j] = dst;
          }
        }
        block_channels_for(count, column);
      }
    }
  }
}

#define CORTEXM_CONV2D_ON_PATHS(paths) \
  template void quantized_conv2d_on_paths<paths>(const Conv2dParams&, const int8_t*, const int8_t*, const int32_t*, int8_t*, void*);
CORTEXM_EACH_SUBSET_OF_4_BITS(CORTEXM_CONV2D_ON_PATHS)
#undef CORTEXM_CONV2D_ON_PATHS

void quantized_conv2d(const Conv2dParams& p, const int8_t* input, const int8_t* filter,
                      const int32_t* bias, int8_t* output, void* scratch) {
  mve::quantized_conv2d_on_paths<kConv2dAllPaths>(p, input, filter, bias, output, scratch);
}

}  // namespace cortexm::mve

#endif  // CORTEXM_BUILT_ISA == 2
