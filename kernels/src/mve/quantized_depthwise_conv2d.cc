// MVE variant of quantized_depthwise_conv2d. Depth multiplier 1: 8 channels per vector of int16
// lanes (VLDRB.S16 widening loads, x + input_offset fits int16), each valid tap multiplied into
// int32 sums of the even and the odd channels (VMULLB / VMULLT). Two output pixels whose windows
// cover the same taps run together, each weight vector loaded once for both: a pixel and the one
// below it when their rows' windows cover the same filter rows (edge columns included), else
// horizontal neighbours with the same columns; the rest run alone. Windows of 2-3 rows by 2-3
// columns run unrolled. Full groups of 8 channels load without predication and requantize in a
// short asm block, the last partial group loads under VCTP predicates (off lanes 0). Other depth
// multipliers: 4 output channels per vector of int32 lanes: 4 outputs of one input channel
// multiply its byte by 4 filter values (VMLA by scalar); otherwise the input channels are
// gathered. Each group of channels is requantized as vectors with its own multipliers and shifts.
#include "variants.h"

#if CORTEXM_BUILT_ISA == 2

#include "conv_window.h"
#include "mve/mve_ops.h"

namespace cortexm::mve {

namespace {

inline int32x4_t tap(int32x4_t acc, int32x4_t x, int32_t offset, const int8_t* w,
                     mve_pred16_t lanes) {
  return vaddq_s32(acc, vmulq_s32(vaddq_n_s32(x, offset), vldrbq_z_s32(w, lanes)));
}

// Sums over a window of rows x cols taps for 8 channels: even channels into *even, odd into *odd.
// x and w point at the first tap of the first channel; taps of a row are tap_step input and out_c
// filter bytes apart. Rows, Cols > 0 fix the window at compile time; Tail predicates the loads.
template <int Rows, int Cols, bool Tail>
inline void sum8(const int8_t* x, const int8_t* w, int32_t rows, int32_t cols, int32_t row_step,
                 int32_t tap_step, int32_t w_row_step, int32_t out_c, int32_t offset,
                 mve_pred16_t lanes, int32x4_t* even, int32x4_t* odd) {
  if (Rows > 0) rows = Rows;
  if (Cols > 0) cols = Cols;
  int32x4_t e = *even, o = *odd;
  const int16_t off = static_cast<int16_t>(offset);
  for (int32_t r = 0; r < rows; ++r, x += row_step, w += w_row_step) {
    for (int32_t k = 0; k < cols; ++k) {
      const int16x8_t xv = Tail ? vldrbq_z_s16(x + k * tap_step, lanes) : vldrbq_s16(x + k * tap_step);
      const int16x8_t wv = Tail ? vldrbq_z_s16(w + k * out_c, lanes) : vldrbq_s16(w + k * out_c);
      const int16x8_t xo = vaddq_n_s16(xv, off);
      e = vaddq_s32(e, vmullbq_int_s16(xo, wv));
      o = vaddq_s32(o, vmulltq_int_s16(xo, wv));
      // Keeps each tap's adds in place: otherwise GCC 12 reassociates the adds of an unrolled
      // window and spills Q registers to the stack.
      __asm__ volatile("" : "+w"(e), "+w"(o));
    }
  }
  *even = e;
  *odd = o;
}

// sum8 for two output pixels whose windows cover the same taps, `next` input bytes apart: each
// weight vector is loaded once for both. Sums of pixel 0 into sums[0] (even), sums[1] (odd), of
// pixel 1 into sums[2], sums[3].
template <int Rows, int Cols, bool Tail>
inline void sum8x2(const int8_t* x, int32_t next, const int8_t* w, int32_t rows, int32_t cols,
                   int32_t row_step, int32_t tap_step, int32_t w_row_step, int32_t out_c,
                   int32_t offset, mve_pred16_t lanes, int32x4_t sums[4]) {
  if (Rows > 0) rows = Rows;
  if (Cols > 0) cols = Cols;
  int32x4_t e0 = sums[0], o0 = sums[1], e1 = sums[2], o1 = sums[3];
  const int16_t off = static_cast<int16_t>(offset);
  for (int32_t r = 0; r < rows; ++r, x += row_step, w += w_row_step) {
    for (int32_t k = 0; k < cols; ++k) {
      const int8_t* x0 = x + k * tap_step;
      const int16x8_t wv = Tail ? vldrbq_z_s16(w + k * out_c, lanes) : vldrbq_s16(w + k * out_c);
      const int16x8_t xa = vaddq_n_s16(Tail ? vldrbq_z_s16(x0, lanes) : vldrbq_s16(x0), off);
      e0 = vaddq_s32(e0, vmullbq_int_s16(xa, wv));
      o0 = vaddq_s32(o0, vmulltq_int_s16(xa, wv));
      __asm__ volatile("" : "+w"(e0), "+w"(o0));  // one input vector live at a time
      const int16x8_t xb =
          vaddq_n_s16(Tail ? vldrbq_z_s16(x0 + next, lanes) : vldrbq_s16(x0 + next), off);
      e1 = vaddq_s32(e1, vmullbq_int_s16(xb, wv));
      o1 = vaddq_s32(o1, vmulltq_int_s16(xb, wv));
      // As in sum8: keeps each tap's adds in place (no spills).
      __asm__ volatile("" : "+w"(e0), "+w"(o0), "+w"(e1), "+w"(o1));
    }
  }
  sums[0] = e0;
  sums[1] = o0;
  sums[2] = e1;
  sums[3] = o1;
}

// Requantizes and stores channels first + 2 i (i < 4) of `sums` that are below out_c.
inline void finish_strided(int32x4_t sums, const int32_t* bias, const ConvQuantParams& q,
                           int32_t first, int32_t out_c, int8_t* out) {
  const uint32x4_t index = vidupq_n_u32(0, 2);  // 0, 2, 4, 6
  const mve_pred16_t lanes = vcmphiq_u32(vdupq_n_u32(static_cast<uint32_t>(out_c - first)), index);
  if (bias) sums = vaddq_s32(sums, vldrwq_gather_shifted_offset_z_s32(bias + first, index, lanes));
  sums = requantize(sums, vldrwq_gather_shifted_offset_z_s32(q.multipliers + first, index, lanes),
                    vldrwq_gather_shifted_offset_z_s32(q.shifts + first, index, lanes));
  vstrbq_scatter_offset_p_s32(out + first, index,
                              offset_and_clamp(sums, q.output_offset, q.activation_min, q.activation_max),
                              lanes);
}

// Requantizes the sums of 1 or 2 pixels (s0, s1) for 4 channels 2 apart of a full group and
// stores lane j at out0 + 2 j (out1 + 2 j): multipliers and shifts gathered once (index (0, 2, 4, 6)), then
// the instructions of mve::requantize (VSHL, VQRDMULH, the VAND / VSHR / VQADD fix-up, VRSHL),
// + output_offset and the clamp. Written out because GCC 12 spills the constant vectors of the
// intrinsic version (about 32 instructions per pixel instead of 11).
template <int Pixels>
inline void finish_lanes(int32x4_t s0, int32x4_t s1, const int32_t* multipliers,
                         const int32_t* shifts, uint32x4_t index, const ConvQuantParams& q,
                         int8_t* out0, int8_t* out1) {
#if defined(CORTEXM_SINGLE_ROUNDING) && CORTEXM_SINGLE_ROUNDING
  const int32x4_t m = vldrwq_gather_shifted_offset_s32(multipliers, index);
  const int32x4_t sh = vldrwq_gather_shifted_offset_s32(shifts, index);
  vstrbq_scatter_offset_s32(out0, index, offset_and_clamp(requantize(s0, m, sh), q.output_offset,
                                                          q.activation_min, q.activation_max));
  if (Pixels == 2)
    vstrbq_scatter_offset_s32(out1, index, offset_and_clamp(requantize(s1, m, sh), q.output_offset,
                                                            q.activation_min, q.activation_max));
#else
  int32x4_t m, sh, t;
#define CORTEXM_DW_FINISH(S, OUT)                         \
  "vqrdmulh.s32 %q[" S "], %q[" S "], %q[m]\n\t"          \
  "vand %q[t], %q[" S "], %q[sh]\n\t"                     \
  "vshr.s32 %q[t], %q[t], #31\n\t"                        \
  "vqadd.s32 %q[" S "], %q[" S "], %q[t]\n\t"             \
  "vrshl.s32 %q[" S "], %q[" S "], %q[sh]\n\t"            \
  "vadd.i32 %q[" S "], %q[" S "], %[off]\n\t"             \
  "vdup.32 %q[t], %[lo]\n\t"                              \
  "vmax.s32 %q[" S "], %q[" S "], %q[t]\n\t"              \
  "vdup.32 %q[t], %[hi]\n\t"                              \
  "vmin.s32 %q[" S "], %q[" S "], %q[t]\n\t"              \
  "vstrb.32 %q[" S "], [%[" OUT "], %q[index]]\n\t"
#define CORTEXM_DW_SETUP                                  \
  "vldrw.u32 %q[sh], [%[sp_], %q[index], uxtw #2]\n\t"    \
  "vldrw.u32 %q[m], [%[mp], %q[index], uxtw #2]\n\t"      \
  "vmov.i32 %q[t], #0\n\t"                                \
  "vmax.s32 %q[t], %q[sh], %q[t]\n\t"                     \
  "vshl.s32 %q[s0], %q[s0], %q[t]\n\t"
#define CORTEXM_DW_RIGHT /* min(shift, 0) = shift - max(shift, 0) */ \
  "vsub.i32 %q[sh], %q[sh], %q[t]\n\t"
  if (Pixels == 2) {
    __asm__ volatile(CORTEXM_DW_SETUP "vshl.s32 %q[s1], %q[s1], %q[t]\n\t" CORTEXM_DW_RIGHT
                     CORTEXM_DW_FINISH("s0", "o0") CORTEXM_DW_FINISH("s1", "o1")
                     : [s0] "+&w"(s0), [s1] "+&w"(s1), [m] "=&w"(m), [sh] "=&w"(sh), [t] "=&w"(t)
                     : [index] "w"(index), [sp_] "r"(shifts), [mp] "r"(multipliers),
                       [off] "r"(q.output_offset), [lo] "r"(q.activation_min),
                       [hi] "r"(q.activation_max), [o0] "r"(out0), [o1] "r"(out1)
                     : "memory");
  } else {
    __asm__ volatile(CORTEXM_DW_SETUP CORTEXM_DW_RIGHT CORTEXM_DW_FINISH("s0", "o0")
                     : [s0] "+&w"(s0), [m] "=&w"(m), [sh] "=&w"(sh), [t] "=&w"(t)
                     : [index] "w"(index), [sp_] "r"(shifts), [mp] "r"(multipliers),
                       [off] "r"(q.output_offset), [lo] "r"(q.activation_min),
                       [hi] "r"(q.activation_max), [o0] "r"(out0)
                     : "memory");
    (void)s1;
    (void)out1;
  }
#undef CORTEXM_DW_FINISH
#undef CORTEXM_DW_SETUP
#undef CORTEXM_DW_RIGHT
#endif
}

// The bias of 4 channels 2 apart (lane i: bias[2 i]), or 0.
inline int32x4_t bias_lanes(const int32_t* bias, uint32x4_t index) {
  return bias ? vldrwq_gather_shifted_offset_s32(bias, index) : vdupq_n_s32(0);
}

inline int8_t* finish(int32x4_t acc, const ConvQuantParams& q, int32_t channel, mve_pred16_t lanes,
                      int8_t* out) {
  acc = requantize(acc, vldrwq_z_s32(q.multipliers + channel, lanes),
                   vldrwq_z_s32(q.shifts + channel, lanes));
  vstrbq_p_s32(out + channel, offset_and_clamp(acc, q.output_offset, q.activation_min, q.activation_max),
               lanes);
  return out;
}

// The taps of a window: the first valid input byte and filter byte, and how many rows and columns.
struct Window {
  const int8_t* x;
  const int8_t* w;
  int32_t rows, cols;
};

// Geometry of one depthwise call, shared by the loops below.
struct Layout {
  int32_t out_c, row_step, tap_step, w_row_step, offset;
};

// Bias only: a window without a valid tap (rare: not inlined).
__attribute__((noinline)) void store_bias_only(const int32_t* bias, const ConvQuantParams& q, int32_t out_c, int8_t* out) {
  for (int32_t c = 0; c < out_c; c += 4) {
    const mve_pred16_t lanes = vctp32q(static_cast<uint32_t>(out_c - c));
    finish(bias ? vldrwq_z_s32(bias + c, lanes) : vdupq_n_s32(0), q, c, lanes, out);
  }
}

// Depth multiplier 1, one output pixel: 8 channels at a time. Rows, Cols > 0 fix the window.
template <int Rows, int Cols>
__attribute__((noinline)) void pixel_m1(const Window& win, const Layout& l, const int32_t* bias,
                                        const ConvQuantParams& q, int8_t* out) {
  const uint32x4_t index = vidupq_n_u32(0, 2);  // 0, 2, 4, 6
  int32_t c = 0;
  for (; c + 8 <= l.out_c; c += 8) {
    int32x4_t even = bias_lanes(bias ? bias + c : nullptr, index);
    int32x4_t odd = bias_lanes(bias ? bias + c + 1 : nullptr, index);
    sum8<Rows, Cols, false>(win.x + c, win.w + c, win.rows, win.cols, l.row_step, l.tap_step,
                            l.w_row_step, l.out_c, l.offset, 0, &even, &odd);
    finish_lanes<1>(even, even, q.multipliers + c, q.shifts + c, index, q, out + c, out + c);
    finish_lanes<1>(odd, odd, q.multipliers + c + 1, q.shifts + c + 1, index, q, out + c + 1,
                    out + c + 1);
  }
  if (c < l.out_c) {
    int32x4_t even = vdupq_n_s32(0), odd = vdupq_n_s32(0);
    sum8<0, 0, true>(win.x + c, win.w + c, win.rows, win.cols, l.row_step, l.tap_step,
                     l.w_row_step, l.out_c, l.offset, vctp16q(static_cast<uint32_t>(l.out_c - c)),
                     &even, &odd);
    finish_strided(even, bias, q, c, l.out_c, out);
    if (c + 1 < l.out_c) finish_strided(odd, bias, q, c + 1, l.out_c, out);
  }
}

// Depth multiplier 1, two output pixels with the same taps, `next` input bytes apart (horizontal
// or vertical neighbours); outputs at out and out + out_next. Rows, Cols > 0 fix the window.
template <int Rows, int Cols>
__attribute__((noinline)) void pair_m1(const Window& win, int32_t next, const Layout& l,
                                       const int32_t* bias, const ConvQuantParams& q, int8_t* out,
                                       int32_t out_next) {
  const uint32x4_t index = vidupq_n_u32(0, 2);  // 0, 2, 4, 6
  int32_t c = 0;
  for (; c + 8 <= l.out_c; c += 8) {
    const int32x4_t bias_even = bias_lanes(bias ? bias + c : nullptr, index);
    const int32x4_t bias_odd = bias_lanes(bias ? bias + c + 1 : nullptr, index);
    int32x4_t sums[4] = {bias_even, bias_odd, bias_even, bias_odd};
    sum8x2<Rows, Cols, false>(win.x + c, next, win.w + c, win.rows, win.cols, l.row_step, l.tap_step,
                              l.w_row_step, l.out_c, l.offset, 0, sums);
    finish_lanes<2>(sums[0], sums[2], q.multipliers + c, q.shifts + c, index, q, out + c,
                    out + out_next + c);
    finish_lanes<2>(sums[1], sums[3], q.multipliers + c + 1, q.shifts + c + 1, index, q,
                    out + c + 1, out + out_next + c + 1);
  }
  if (c < l.out_c) {
    int32x4_t sums[4] = {vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0)};
    sum8x2<0, 0, true>(win.x + c, next, win.w + c, win.rows, win.cols, l.row_step, l.tap_step,
                       l.w_row_step, l.out_c, l.offset, vctp16q(static_cast<uint32_t>(l.out_c - c)),
                       sums);
    for (int32_t p = 0; p < 2; ++p) {
      finish_strided(sums[2 * p], bias, q, c, l.out_c, out + p * out_next);
      if (c + 1 < l.out_c) finish_strided(sums[2 * p + 1], bias, q, c + 1, l.out_c, out + p * out_next);
    }
  }
}

// pixel_m1 with the window's rows and columns fixed when they are those of 3x3 filters (edge
// windows have 2 or 3 rows and columns). Without the other windows' path in Paths, a call with
// another window writes nothing.
template <uint32_t Paths>
inline void pixel_any(const Window& win, const Layout& l, const int32_t* bias,
                      const ConvQuantParams& q, int8_t* out) {
  if (win.rows == 3 && win.cols == 3)
    pixel_m1<3, 3>(win, l, bias, q, out);
  else if (win.rows == 3 && win.cols == 2)
    pixel_m1<3, 2>(win, l, bias, q, out);
  else if (win.rows == 2 && win.cols == 3)
    pixel_m1<2, 3>(win, l, bias, q, out);
  else if (win.rows == 2 && win.cols == 2)
    pixel_m1<2, 2>(win, l, bias, q, out);
  else if constexpr ((Paths & kDepthwiseConv2dOtherWindows) != 0)
    pixel_m1<0, 0>(win, l, bias, q, out);
}

// pair_m1 likewise. Without the other windows' path in Paths, 2x2 windows run as two pixels (the same results and order of
// reads before writes: the in-place lag holds).
template <uint32_t Paths>
inline void pair_any(const Window& win, int32_t next, const Layout& l, const int32_t* bias,
                     const ConvQuantParams& q, int8_t* out, int32_t out_next) {
  if (win.rows == 3 && win.cols == 3)
    pair_m1<3, 3>(win, next, l, bias, q, out, out_next);
  else if (win.rows == 3 && win.cols == 2)
    pair_m1<3, 2>(win, next, l, bias, q, out, out_next);
  else if (win.rows == 2 && win.cols == 3)
    pair_m1<2, 3>(win, next, l, bias, q, out, out_next);
  else if constexpr ((Paths & kDepthwiseConv2dOtherWindows) != 0)
    pair_m1<0, 0>(win, next, l, bias, q, out, out_next);
  else {
    pixel_any<Paths>(win, l, bias, q, out);
    pixel_any<Paths>(Window{win.x + next, win.w, win.rows, win.cols}, l, bias, q, out + out_next);
  }
}

}  // namespace

template <uint32_t Paths>
void quantized_depthwise_conv2d_on_paths(const DepthwiseConv2dParams& p, const int8_t* input,
                                         const int8_t* filter, const int32_t* bias, int8_t* output,
                                         void* /*scratch*/) {
  constexpr bool kMultiplier1 = (Paths & (kDepthwiseConv2dWindows2To3 | kDepthwiseConv2dOtherWindows)) != 0;
  const ConvGeometry& g = p.geometry;
  const ConvQuantParams q = p.quant;
  const int32_t in_h = p.input.h, in_w = p.input.w, in_c = p.input.c;
  const int32_t out_c = p.filter.c, kernel_h = p.filter.h, kernel_w = p.filter.w;
  const int32_t multiplier = p.depth_multiplier;
  const int32_t offset = q.input_offset;
  const int32_t row_step = g.dilation_h * in_w * in_c, tap_step = g.dilation_w * in_c;
  const int32_t w_row_step = kernel_w * out_c;
  const Layout layout{out_c, row_step, tap_step, w_row_step, offset};
  // Input bytes between the windows of horizontal and of vertical neighbours; output bytes between
  // vertical neighbours.
  const int32_t next_x = g.stride_w * in_c, next_y = g.stride_h * in_w * in_c;
  const int32_t out_row_bytes = p.output.w * out_c;

  for (int32_t n = 0; n < p.output.n; ++n) {
    const int8_t* image = input + int64_t{n} * in_h * in_w * in_c;
    for (int32_t oy = 0; oy < p.output.h;) {
      const int64_t y0 = int64_t{oy} * g.stride_h - g.padding.top;
      const TapRange rows = valid_taps(y0, in_h, kernel_h, g.dilation_h);
      const int32_t n_rows = rows.last - rows.first;
      int8_t* out_row = output + (int64_t{n} * p.output.h + oy) * out_row_bytes;
      // The window of output pixel ox, whose first valid column is cols.first.
      auto window = [&](int32_t ox, TapRange cols) {
        const int64_t x0 = int64_t{ox} * g.stride_w - g.padding.left;
        return Window{image + ((y0 + int64_t{rows.first} * g.dilation_h) * in_w +
                               (x0 + int64_t{cols.first} * g.dilation_w)) * in_c,
                      filter + (int64_t{rows.first} * kernel_w + cols.first) * out_c, n_rows,
                      cols.last - cols.first};
      };
      // Depth multiplier 1 and the next output row's windows cover the same filter rows: every
      // pixel of the two rows pairs with the one below it (the rows' edge pixels included).
      if (kMultiplier1 && multiplier == 1 && n_rows > 0 && oy + 1 < p.output.h) {
        const TapRange rows1 = valid_taps(y0 + g.stride_h, in_h, kernel_h, g.dilation_h);
        if (rows1.first == rows.first && rows1.last == rows.last) {
          for (int32_t ox = 0; ox < p.output.w; ++ox) {
            int8_t* out = out_row + int64_t{ox} * out_c;
            const int64_t x0 = int64_t{ox} * g.stride_w - g.padding.left;
            const TapRange cols = valid_taps(x0, in_w, kernel_w, g.dilation_w);
            if (cols.last <= cols.first) {  // no valid tap: bias only
              store_bias_only(bias, q, out_c, out);
              store_bias_only(bias, q, out_c, out + out_row_bytes);
              continue;
            }
            pair_any<Paths>(window(ox, cols), next_y, layout, bias, q, out, out_row_bytes);
          }
          oy += 2;
          continue;
        }
      }
      for (int32_t ox = 0; ox < p.output.w;) {
        int8_t* out = out_row + int64_t{ox} * out_c;
        const int64_t x0 = int64_t{ox} * g.stride_w - g.padding.left;
        const TapRange cols = valid_taps(x0, in_w, kernel_w, g.dilation_w);
        if (n_rows <= 0 || cols.last <= cols.first) {  // no valid tap: bias only
          store_bias_only(bias, q, out_c, out);
          ++ox;
          continue;
        }
        const Window win = window(ox, cols);
        if (multiplier == 1) {
          if constexpr (!kMultiplier1) return;
          // Horizontal neighbours with the same taps share a pass, the rest run alone.
          if (ox + 1 < p.output.w) {
            const TapRange cols1 = valid_taps(x0 + g.stride_w, in_w, kernel_w, g.dilation_w);
            if (cols1.first == cols.first && cols1.last == cols.last) {
              pair_any<Paths>(win, next_x, layout, bias, q, out, out_c);
              ox += 2;
              continue;
            }
          }
          pixel_any<Paths>(win, layout, bias, q, out);
          ++ox;
          continue;
        }
        if constexpr ((Paths & kDepthwiseConv2dMultiplier) == 0) return;
        ++ox;
        const int8_t* x_first = win.x;
        const int8_t* w_first = win.w;
        const int32_t n_cols = win.cols;
        for (int32_t c = 0; c < out_c; c += 4) {
          const mve_pred16_t lanes = vctp32q(static_cast<uint32_t>(out_c - c));
          int32x4_t acc = bias ? vldrwq_z_s32(bias + c, lanes) : vdupq_n_s32(0);
          if (c % multiplier + 4 <= multiplier) {
            // 4 outputs of one input channel: its byte times 4 filter values per tap (VMLA by scalar).
            const int8_t* x = x_first + c / multiplier;
            const int8_t* w = w_first + c;
            for (int32_t r = 0; r < n_rows; ++r, x += row_step, w += w_row_step)
              for (int32_t k = 0; k < n_cols; ++k)
                acc = vmlaq_n_s32(acc, vldrbq_s32(w + k * out_c), x[k * tap_step] + offset);
            finish(acc, q, c, lanes, out);
            continue;
          }
          // Input channel of each lane: (c + lane) / depth multiplier.
          uint32_t in_channel[4];
          for (int32_t l = 0; l < 4; ++l) in_channel[l] = static_cast<uint32_t>((c + l) / multiplier);
          const uint32x4_t gather = vld1q_u32(in_channel);
          const int8_t* x = x_first;
          const int8_t* w = w_first + c;
          for (int32_t r = 0; r < n_rows; ++r, x += row_step, w += w_row_step)
            for (int32_t k = 0; k < n_cols; ++k)
              acc = tap(acc, vldrbq_gather_offset_z_s32(x + k * tap_step, gather, lanes), offset,
                        w + k * out_c, lanes);
          finish(acc, q, c, lanes, out);
        }
      }
      ++oy;
    }
  }
}

#define CORTEXM_DEPTHWISE_ON_PATHS(paths)                   \
  template void quantized_depthwise_conv2d_on_paths<paths>( \
      const DepthwiseConv2dParams&, const int8_t*, const int8_t*, const int32_t*, int8_t*, void*);
CORTEXM_EACH_SUBSET_OF_3_BITS(CORTEXM_DEPTHWISE_ON_PATHS)
#undef CORTEXM_DEPTHWISE_ON_PATHS

void quantized_depthwise_conv2d(const DepthwiseConv2dParams& p, const int8_t* input,
                                const int8_t* filter, const int32_t* bias, int8_t* output,
                                void* scratch) {
  mve::quantized_depthwise_conv2d_on_paths<kDepthwiseConv2dAllPaths>(p, input, filter, bias, output, scratch);
}

}  // namespace cortexm::mve

#endif  // CORTEXM_BUILT_ISA == 2
