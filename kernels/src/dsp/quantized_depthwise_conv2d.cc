// DSP variant of quantized_depthwise_conv2d. Depth multiplier 1: 4 channels per step; one word
// load each of input and filter per tap, SXTAB16 / SXTAB16 ROR #8 split the input into int16 pairs
// with the input offset added, SXTB16 / SXTB16 ROR #8 the filter, and SMLABB / SMLATT accumulate
// each channel on its own (10 instructions per tap and 4 channels); interior 3x3 windows unrolled.
// The 4 sums are requantized, saturated and clamped as one word (the conv output stage,
// dsp_ops.h) and stored with one STR. With depth multipliers of 4 or more, groups of 4 outputs of
// one input channel share its byte per tap; other channels go one at a time.
#include "variants.h"

#if CORTEXM_BUILT_ISA == 1

#include "conv_window.h"
#include "cortexm/kernels/requantize.h"
#include "dsp/dsp_ops.h"

namespace cortexm::dsp {

namespace {

// Sums of 4 channels over a window of `rows` x `cols` taps; x and w point at the first valid tap
// of channel 0 of the group; taps of a row are tap_step input bytes and out_c filter bytes apart.
// Rows and Cols > 0 fix the counts at compile time (the unrolled interior 3x3 window).
template <int Rows, int Cols>
inline void sum4(const int8_t* x, const int8_t* w, int32_t rows, int32_t cols, int32_t row_step,
                 int32_t tap_step, int32_t w_row_step, int32_t out_c, uint32_t offsets, int32_t* acc) {
  if (Rows > 0) rows = Rows;
  if (Cols > 0) cols = Cols;
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  for (int32_t r = 0; r < rows; ++r) {
    const int8_t* xr = x;
    const int8_t* wr = w;
    for (int32_t k = 0; k < cols; ++k) {
      const uint32_t xv = load_u32(xr), wv = load_u32(wr);
      const uint32_t x02 = sxtab16(offsets, xv), x13 = sxtab16_ror8(offsets, xv);
      const uint32_t w02 = sxtb16(wv), w13 = sxtb16_ror8(wv);
      a0 = smlabb(x02, w02, a0);
      a2 = smlatt(x02, w02, a2);
      a1 = smlabb(x13, w13, a1);
      a3 = smlatt(x13, w13, a3);
      xr += tap_step;
      wr += out_c;
    }
    x += row_step;
    w += w_row_step;
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

// sum4 for a window one tap wide (str_ww's 1-pixel-wide images): one loop over the rows, each tap
// row_step input bytes and w_row_step filter bytes after the previous one (10 instructions per tap
// and 4 channels, plus 2 for the loop).
inline void sum4_column(const int8_t* x, const int8_t* w, int32_t rows, int32_t row_step, int32_t w_row_step,
                        uint32_t offsets, int32_t* acc) {
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  for (int32_t r = rows; r > 0; --r, x += row_step, w += w_row_step) {
    const uint32_t xv = load_u32(x), wv = load_u32(w);
    const uint32_t x02 = sxtab16(offsets, xv), x13 = sxtab16_ror8(offsets, xv);
    const uint32_t w02 = sxtb16(wv), w13 = sxtb16_ror8(wv);
    a0 = smlabb(x02, w02, a0);
    a2 = smlatt(x02, w02, a2);
    a1 = smlabb(x13, w13, a1);
    a3 = smlatt(x13, w13, a3);
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

// sum4_column for two windows `distance` input bytes apart with the same filter taps (vertically
// adjacent pixels of a 1-pixel-wide image): each filter word widened once for both.
inline void sum4_column_pair(const int8_t* x, int32_t distance, const int8_t* w, int32_t rows, int32_t row_step,
                             int32_t w_row_step, uint32_t offsets, int32_t* acc, int32_t* bcc) {
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, b0 = 0, b1 = 0, b2 = 0, b3 = 0;
  for (int32_t r = rows; r > 0; --r, x += row_step, w += w_row_step) {
    const uint32_t wv = load_u32(w);
    const uint32_t w02 = sxtb16(wv), w13 = sxtb16_ror8(wv);
    const uint32_t xv = load_u32(x);
    const uint32_t x02 = sxtab16(offsets, xv), x13 = sxtab16_ror8(offsets, xv);
    a0 = smlabb(x02, w02, a0);
    a2 = smlatt(x02, w02, a2);
    a1 = smlabb(x13, w13, a1);
    a3 = smlatt(x13, w13, a3);
    const uint32_t yv = load_u32(x + distance);
    const uint32_t y02 = sxtab16(offsets, yv), y13 = sxtab16_ror8(offsets, yv);
    b0 = smlabb(y02, w02, b0);
    b2 = smlatt(y02, w02, b2);
    b1 = smlabb(y13, w13, b1);
    b3 = smlatt(y13, w13, b3);
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
  bcc[0] = b0;
  bcc[1] = b1;
  bcc[2] = b2;
  bcc[3] = b3;
}

// sum4 over Rows x Cols (2 or 3 each) valid taps of a 3x3 window with unit dilation and depth
// multiplier 1, so that a tap's input and filter words are both `step` (the channel count) bytes
// after the previous tap's; x and w point at the first valid tap. GCC keeps the 18 tap addresses
// of the unrolled loop and spills them; by hand it is 10 instructions per tap and 4 per row (98
// for the 36 MACs of an interior window).
template <int Rows, int Cols>
inline void sum4_3x3(const int8_t* x, const int8_t* w, int32_t row_step, int32_t step,
                     uint32_t offsets, int32_t* acc) {
  static_assert(Rows >= 2 && Rows <= 3 && Cols >= 2 && Cols <= 3, "2 or 3 rows and columns");
#if defined(CORTEXM_EMULATE_DSP)
  sum4<Rows, Cols>(x, w, Rows, Cols, row_step, step, 3 * step, step, offsets, acc);
#else
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  const int32_t step2 = 2 * step;
#define CORTEXM_DSP_TAP(x_at, w_at)                     \
  "ldr     %[xv], " x_at "\n\t"                         \
  "ldr     %[wv], " w_at "\n\t"                         \
  "sxtab16 %[t0], %[off], %[xv]\n\t"                   \
  "sxtab16 %[xv], %[off], %[xv], ror #8\n\t"           \
  "sxtb16  %[t1], %[wv]\n\t"                           \
  "sxtb16  %[wv], %[wv], ror #8\n\t"                   \
  "smlabb  %[a0], %[t0], %[t1], %[a0]\n\t"             \
  "smlatt  %[a2], %[t0], %[t1], %[a2]\n\t"             \
  "smlabb  %[a1], %[xv], %[wv], %[a1]\n\t"             \
  "smlatt  %[a3], %[xv], %[wv], %[a3]\n\t"
#define CORTEXM_DSP_ROW2                                 \
  CORTEXM_DSP_TAP("[%[x]]", "[%[w]]")                    \
  CORTEXM_DSP_TAP("[%[x], %[step]]", "[%[w], %[step]]")
#define CORTEXM_DSP_ROW3 CORTEXM_DSP_ROW2 CORTEXM_DSP_TAP("[%[x], %[step2]]", "[%[w], %[step2]]")
  // The next row's first tap: row_step input bytes and a filter row (3 steps) further.
#define CORTEXM_DSP_NEXT_ROW          \
  "ldr     %[t0], %[row_step]\n\t"   \
  "add     %[x], %[x], %[t0]\n\t"    \
  "add     %[w], %[w], %[step2]\n\t" \
  "add     %[w], %[w], %[step]\n\t"
#define CORTEXM_DSP_SUM(code)                                                                           \
  __asm__(code                                                                                          \
          : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(x), [w] "+r"(w),       \
            [xv] "=&r"(xv), [wv] "=&r"(wv), [t0] "=&r"(t0), [t1] "=&r"(t1)                              \
          : [step] "r"(step), [step2] "r"(step2), [off] "r"(offsets), [row_step] "m"(row_step)         \
          : "memory")
  uint32_t xv, wv, t0, t1;
  if constexpr (Rows == 3 && Cols == 3) {
    CORTEXM_DSP_SUM(CORTEXM_DSP_ROW3 CORTEXM_DSP_NEXT_ROW CORTEXM_DSP_ROW3 CORTEXM_DSP_NEXT_ROW CORTEXM_DSP_ROW3);
  } else if constexpr (Rows == 3) {
    CORTEXM_DSP_SUM(CORTEXM_DSP_ROW2 CORTEXM_DSP_NEXT_ROW CORTEXM_DSP_ROW2 CORTEXM_DSP_NEXT_ROW CORTEXM_DSP_ROW2);
  } else if constexpr (Cols == 3) {
    CORTEXM_DSP_SUM(CORTEXM_DSP_ROW3 CORTEXM_DSP_NEXT_ROW CORTEXM_DSP_ROW3);
  } else {
    CORTEXM_DSP_SUM(CORTEXM_DSP_ROW2 CORTEXM_DSP_NEXT_ROW CORTEXM_DSP_ROW2);
  }
#undef CORTEXM_DSP_TAP
#undef CORTEXM_DSP_ROW2
#undef CORTEXM_DSP_ROW3
#undef CORTEXM_DSP_NEXT_ROW
#undef CORTEXM_DSP_SUM
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
#endif
}

// sum4 for 4 output channels of one input channel (depth multiplier >= 4): one input byte per tap,
// in both lanes.
inline void sum4_one_input(const int8_t* x, const int8_t* w, int32_t rows, int32_t cols,
                           int32_t row_step, int32_t tap_step, int32_t w_row_step, int32_t out_c,
                           int32_t offset, int32_t* acc) {
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  for (int32_t r = 0; r < rows; ++r, x += row_step, w += w_row_step) {
    const int8_t* xr = x;
    const int8_t* wr = w;
    for (int32_t k = 0; k < cols; ++k, xr += tap_step, wr += out_c) {
      const uint32_t xx = splat16(*xr + offset), wv = load_u32(wr);
      const uint32_t w02 = sxtb16(wv), w13 = sxtb16_ror8(wv);
      a0 = smlabb(xx, w02, a0);
      a2 = smlatt(xx, w02, a2);
      a1 = smlabb(xx, w13, a1);
      a3 = smlatt(xx, w13, a3);
    }
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

// Channels c .. c + 3 of one output pixel from their sums.
inline void store4(const int32_t* sums, const Stage& s, int32_t c, int8_t* out) {
  const int32_t v0 = requantized(sums[0], channel(s, c), s);
  const int32_t v1 = requantized(sums[1], channel(s, c + 1), s);
  const int32_t v2 = requantized(sums[2], channel(s, c + 2), s);
  const int32_t v3 = requantized(sums[3], channel(s, c + 3), s);
  store_u32(out + c, clamped_bytes(v0, v1, v2, v3, s));
}

// The window of one output pixel: its first valid tap and how many rows and columns are valid.
struct Window {
  const int8_t* x;  // channel 0 of the first valid tap (only read when rows, cols > 0)
  const int8_t* w;  // the filter at that tap
  int32_t rows, cols;
};

struct Steps {
  int32_t row, tap, w_row, out_c;
};

// Depth multiplier 1: the `paired` channels 4 at a time. window_3x3: for a 3x3 filter with unit
// dilation whose window has 2 or 3 valid rows and columns, (rows - 2) * 2 + cols - 2; else -1.
// Its own function, so that its registers are allocated apart from the window arithmetic's.
__attribute__((noinline)) void pixel_paired(const Stage& stage, const Window& win, const Steps& st,
                                            int32_t window_3x3, uint32_t offsets, int32_t paired,
                                            int8_t* out) {
  const Stage s = stage;  // a local copy: output stores cannot alias it
  const Window v = win;
  const Steps t = st;
  int32_t sums[4] = {0, 0, 0, 0};
  for (int32_t c = 0; c < paired; c += 4) {
    switch (window_3x3) {
      case 3: sum4_3x3<3, 3>(v.x + c, v.w + c, t.row, t.out_c, offsets, sums); break;
      case 2: sum4_3x3<3, 2>(v.x + c, v.w + c, t.row, t.out_c, offsets, sums); break;
      case 1: sum4_3x3<2, 3>(v.x + c, v.w + c, t.row, t.out_c, offsets, sums); break;
      case 0: sum4_3x3<2, 2>(v.x + c, v.w + c, t.row, t.out_c, offsets, sums); break;
      default:
        if (v.cols == 1 && v.rows > 0)
          sum4_column(v.x + c, v.w + c, v.rows, t.row, t.w_row, offsets, sums);
        else if (v.rows > 0 && v.cols > 0)
          sum4<0, 0>(v.x + c, v.w + c, v.rows, v.cols, t.row, t.tap, t.w_row, t.out_c, offsets, sums);
    }
    store4(sums, s, c, out);
  }
}

// Depth multiplier 1, unit dilation, channels a multiple of 4: two horizontally adjacent output
// pixels with interior 3x3 windows, x_step input bytes apart, sharing each channel's
// requantization set-up. x points at the first pixel's window, channel 0.
__attribute__((noinline)) void interior_pair(const Stage& stage, const int8_t* x, int32_t x_step,
                                             const int8_t* w, int32_t row_step, int32_t channels,
                                             uint32_t offsets, int8_t* out0, int8_t* out1) {
  const Stage s = stage;  // a local copy: output stores cannot alias it
  for (int32_t c = 0; c < channels; c += 4) {
    int32_t a[4], b[4];
    sum4_3x3<3, 3>(x + c, w + c, row_step, channels, offsets, a);
    sum4_3x3<3, 3>(x + x_step + c, w + c, row_step, channels, offsets, b);
    const Channel c0 = channel(s, c), c1 = channel(s, c + 1);
    const int32_t a0 = requantized(a[0], c0, s), b0 = requantized(b[0], c0, s);
    const int32_t a1 = requantized(a[1], c1, s), b1 = requantized(b[1], c1, s);
    const Channel c2 = channel(s, c + 2), c3 = channel(s, c + 3);
    const int32_t a2 = requantized(a[2], c2, s), b2 = requantized(b[2], c2, s);
    const int32_t a3 = requantized(a[3], c3, s), b3 = requantized(b[3], c3, s);
    store_u32(out0 + c, clamped_bytes(a0, a1, a2, a3, s));
    store_u32(out1 + c, clamped_bytes(b0, b1, b2, b3, s));
  }
}

// Depth multiplier 1, channels a multiple of 4, a 1-pixel-wide output: two vertically adjacent
// output pixels whose windows are `rows` taps of one column, `distance` input bytes apart,
// sharing the filter's widening and each channel's requantization set-up.
__attribute__((noinline)) void column_pair(const Stage& stage, const int8_t* x, int32_t distance, const int8_t* w,
                                           int32_t rows, int32_t row_step, int32_t channels, uint32_t offsets,
                                           int8_t* out0, int8_t* out1) {
  const Stage s = stage;  // a local copy: output stores cannot alias it
  for (int32_t c = 0; c < channels; c += 4) {
    int32_t a[4], b[4];
    sum4_column_pair(x + c, distance, w + c, rows, row_step, channels, offsets, a, b);
    const Channel c0 = channel(s, c), c1 = channel(s, c + 1);
    const int32_t a0 = requantized(a[0], c0, s), b0 = requantized(b[0], c0, s);
    const int32_t a1 = requantized(a[1], c1, s), b1 = requantized(b[1], c1, s);
    const Channel c2 = channel(s, c + 2), c3 = channel(s, c + 3);
    const int32_t a2 = requantized(a[2], c2, s), b2 = requantized(b[2], c2, s);
    const int32_t a3 = requantized(a[3], c3, s), b3 = requantized(b[3], c3, s);
    store_u32(out0 + c, clamped_bytes(a0, a1, a2, a3, s));
    store_u32(out1 + c, clamped_bytes(b0, b1, b2, b3, s));
  }
}

}  // namespace

void quantized_depthwise_conv2d(const DepthwiseConv2dParams& p, const int8_t* input,
                                const int8_t* filter, const int32_t* bias, int8_t* output,
                                void* /*scratch*/) {
  const ConvGeometry& g = p.geometry;
  const ConvQuantParams q = p.quant;
  const Stage stage = {bias, q.multipliers, q.shifts, q.output_offset, q.activation_min, q.activation_max,
                       splat8(q.activation_min), splat8(q.activation_max)};
  const int32_t in_h = p.input.h, in_w = p.input.w, in_c = p.input.c;
  const int32_t out_c = p.filter.c, kernel_h = p.filter.h, kernel_w = p.filter.w;
  const int32_t multiplier = p.depth_multiplier;
  const int32_t offset = q.input_offset;
  const uint32_t offsets = splat16(offset);
  // Channels handled 4 at a time.
  const int32_t paired = multiplier == 1 ? out_c / 4 * 4 : 0;
  const Steps steps = {g.dilation_h * in_w * in_c, g.dilation_w * in_c, kernel_w * out_c, out_c};
  const bool is_3x3 = kernel_h == 3 && kernel_w == 3;
  const bool unit_dilation = g.dilation_h == 1 && g.dilation_w == 1;
  // Whether interior_pair can take every channel of a 3x3 window.
  const bool pairs = is_3x3 && unit_dilation && multiplier == 1 && out_c % 4 == 0;
  const int32_t image_size = in_h * in_w * in_c;
  int8_t* out = output;

  // Whether column_pair can take a 1-pixel-wide output's pixels two by two.
  const bool column_pairs = p.output.w == 1 && kernel_w == 1 && multiplier == 1 && out_c % 4 == 0;
  const int32_t x_origin = -g.padding.left;  // the one output column's input column
  const bool column_inside = x_origin >= 0 && x_origin < in_w;

  for (int32_t n = 0; n < p.output.n; ++n) {
    const int8_t* image = input + int64_t{n} * image_size;
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      const int32_t y0 = oy * g.stride_h - g.padding.top;
      const TapRange rows = valid_taps(y0, in_h, kernel_h, g.dilation_h);
      if (column_pairs && column_inside && oy + 1 < p.output.h && rows.first == 0 && rows.last == kernel_h) {
        const int32_t y1 = y0 + g.stride_h;
        const TapRange next = valid_taps(y1, in_h, kernel_h, g.dilation_h);
        if (next.first == 0 && next.last == kernel_h) {
          column_pair(stage, image + (int64_t{y0} * in_w + x_origin) * in_c, g.stride_h * in_w * in_c, filter,
                      kernel_h, steps.row, out_c, offsets, out, out + out_c);
          out += 2 * out_c;
          ++oy;
          continue;
        }
      }
      for (int32_t ox = 0; ox < p.output.w; ++ox, out += out_c) {
        const int32_t x0 = ox * g.stride_w - g.padding.left;
        const TapRange cols = valid_taps(x0, in_w, kernel_w, g.dilation_w);
        // Two interior windows side by side: one pass for both.
        if (pairs && rows.first == 0 && rows.last == 3 && cols.first == 0 && cols.last == 3 &&
            ox + 1 < p.output.w && x0 + g.stride_w + 2 < in_w) {
          interior_pair(stage, image + (y0 * in_w + x0) * in_c, g.stride_w * in_c, filter, steps.row,
                        out_c, offsets, out, out + out_c);
          ++ox;
          out += out_c;
          continue;
        }
        const int32_t n_rows = rows.last - rows.first, n_cols = cols.last - cols.first;
        const bool any = n_rows > 0 && n_cols > 0;
        const Window win = {
            any ? image + ((y0 + rows.first * g.dilation_h) * in_w + (x0 + cols.first * g.dilation_w)) * in_c
                : image,
            filter + (rows.first * kernel_w + cols.first) * out_c, n_rows, n_cols};
        if (paired > 0) {
          const bool small = n_rows >= 2 && n_rows <= 3 && n_cols >= 2 && n_cols <= 3;
          const int32_t window_3x3 = is_3x3 && unit_dilation && small ? (n_rows - 2) * 2 + n_cols - 2 : -1;
          pixel_paired(stage, win, steps, window_3x3, offsets, paired, out);
        }
        for (int32_t c = paired; c < out_c;) {
          const int32_t in_channel = c / multiplier;
          if (any && c % multiplier + 4 <= multiplier) {  // 4 outputs of one input channel
            int32_t sums[4];
            sum4_one_input(win.x + in_channel, win.w + c, n_rows, n_cols, steps.row, steps.tap,
                           steps.w_row, out_c, offset, sums);
            store4(sums, stage, c, out);
            c += 4;
            continue;
          }
          uint32_t acc = 0;
          for (int32_t kh = rows.first; kh < rows.last; ++kh) {
            const int32_t iy = y0 + kh * g.dilation_h;
            for (int32_t kw = cols.first; kw < cols.last; ++kw) {
              const int32_t ix = x0 + kw * g.dilation_w;
              const int32_t x = image[(iy * in_w + ix) * in_c + in_channel] + offset;
              acc += wrap(x * filter[(kh * kernel_w + kw) * out_c + c]);
            }
          }
          out[c] = static_cast<int8_t>(clamp(requantized(static_cast<int32_t>(acc), channel(stage, c), stage),
                                             q.activation_min, q.activation_max));
          ++c;
        }
      }
    }
  }
}

}  // namespace cortexm::dsp

#endif  // CORTEXM_BUILT_ISA == 1
