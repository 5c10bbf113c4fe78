// MVE variant of quantized_depthwise_conv2d. Depth multiplier 1: 8 channels per vector of int16
// lanes (VLDRB.S16 widening loads, x + input_offset fits int16), each valid tap multiplied into
// int32 sums of the even and the odd channels (VMULLB / VMULLT); interior 3x3 windows run the nine
// taps unrolled, full groups of 8 channels without predication. Other depth multipliers: 4 output
// channels per vector of int32 lanes: 4 outputs of one input channel multiply its byte by 4 filter
// values (VMLA by scalar); otherwise the input channels are gathered. Each group of channels is
// requantized as vectors with its own multipliers and shifts.
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
      // Ties the sums and the loads to this tap: otherwise GCC 12 hoists the loads of an unrolled
      // window, reassociates the adds and spills Q registers to the stack.
      __asm__ volatile("" : "+w"(e), "+w"(o) : : "memory");
    }
  }
  *even = e;
  *odd = o;
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

inline int8_t* finish(int32x4_t acc, const ConvQuantParams& q, int32_t channel, mve_pred16_t lanes,
                      int8_t* out) {
  acc = requantize(acc, vldrwq_z_s32(q.multipliers + channel, lanes),
                   vldrwq_z_s32(q.shifts + channel, lanes));
  vstrbq_p_s32(out + channel, offset_and_clamp(acc, q.output_offset, q.activation_min, q.activation_max),
               lanes);
  return out;
}

}  // namespace

void quantized_depthwise_conv2d(const DepthwiseConv2dParams& p, const int8_t* input,
                                const int8_t* filter, const int32_t* bias, int8_t* output,
                                void* /*scratch*/) {
  const ConvGeometry& g = p.geometry;
  const ConvQuantParams q = p.quant;
  const int32_t in_h = p.input.h, in_w = p.input.w, in_c = p.input.c;
  const int32_t out_c = p.filter.c, kernel_h = p.filter.h, kernel_w = p.filter.w;
  const int32_t multiplier = p.depth_multiplier;
  const int32_t offset = q.input_offset;
  const bool is_3x3 = kernel_h == 3 && kernel_w == 3 && multiplier == 1;
  const int32_t row_step = g.dilation_h * in_w * in_c, tap_step = g.dilation_w * in_c;
  const int32_t w_row_step = kernel_w * out_c;

  for (int32_t n = 0; n < p.output.n; ++n) {
    const int8_t* image = input + int64_t{n} * in_h * in_w * in_c;
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      const int64_t y0 = int64_t{oy} * g.stride_h - g.padding.top;
      const TapRange rows = valid_taps(y0, in_h, kernel_h, g.dilation_h);
      for (int32_t ox = 0; ox < p.output.w; ++ox) {
        const int64_t x0 = int64_t{ox} * g.stride_w - g.padding.left;
        const TapRange cols = valid_taps(x0, in_w, kernel_w, g.dilation_w);
        int8_t* out = output + ((int64_t{n} * p.output.h + oy) * p.output.w + ox) * out_c;
        const int32_t n_rows = rows.last - rows.first, n_cols = cols.last - cols.first;
        if (n_rows <= 0 || n_cols <= 0) {  // no valid tap: bias only
          for (int32_t c = 0; c < out_c; c += 4) {
            const mve_pred16_t lanes = vctp32q(static_cast<uint32_t>(out_c - c));
            finish(bias ? vldrwq_z_s32(bias + c, lanes) : vdupq_n_s32(0), q, c, lanes, out);
          }
          continue;
        }
        // First valid tap; taps of a row are tap_step input and out_c filter bytes apart.
        const int8_t* x_first = image + ((y0 + int64_t{rows.first} * g.dilation_h) * in_w +
                                         (x0 + int64_t{cols.first} * g.dilation_w)) * in_c;
        const int8_t* w_first = filter + (int64_t{rows.first} * kernel_w + cols.first) * out_c;
        if (multiplier == 1) {
          const bool interior_3x3 = is_3x3 && n_rows == 3 && n_cols == 3;
          int32_t c = 0;
          for (; c + 8 <= out_c; c += 8) {
            int32x4_t even = vdupq_n_s32(0), odd = vdupq_n_s32(0);
            if (interior_3x3) {
              sum8<3, 3, false>(x_first + c, w_first + c, 3, 3, row_step, tap_step, w_row_step, out_c,
                                offset, 0, &even, &odd);
            } else {
              sum8<0, 0, false>(x_first + c, w_first + c, n_rows, n_cols, row_step, tap_step, w_row_step,
                                out_c, offset, 0, &even, &odd);
            }
            finish_strided(even, bias, q, c, out_c, out);
            finish_strided(odd, bias, q, c + 1, out_c, out);
          }
          if (c < out_c) {
            int32x4_t even = vdupq_n_s32(0), odd = vdupq_n_s32(0);
            sum8<0, 0, true>(x_first + c, w_first + c, n_rows, n_cols, row_step, tap_step, w_row_step,
                             out_c, offset, vctp16q(static_cast<uint32_t>(out_c - c)), &even, &odd);
            finish_strided(even, bias, q, c, out_c, out);
            if (c + 1 < out_c) finish_strided(odd, bias, q, c + 1, out_c, out);
          }
          continue;
        }
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
    }
  }
}

}  // namespace cortexm::mve

#endif  // CORTEXM_BUILT_ISA == 2
