// DSP variant of quantized_depthwise_conv2d. Depth multiplier 1: 4 channels per step; one word
// load each of input and filter, SXTB16 / SXTB16 ROR #8 split them into int16 pairs, SADD16 adds
// the input offset to both lanes and SMLABB / SMLATT accumulate each channel on its own. With depth
// multipliers of 4 or more, groups of 4 outputs of one input channel share its byte per tap; other
// channels go one at a time.
#include "variants.h"

#if CORTEXM_BUILT_ISA == 1

#include "conv_window.h"
#include "cortexm/kernels/requantize.h"
#include "dsp/dsp_ops.h"

namespace cortexm::dsp {

namespace {

inline int8_t output_value(int32_t acc, const ConvQuantParams& q, int32_t channel) {
  const int32_t scaled = static_cast<int32_t>(
      static_cast<uint32_t>(requantize(acc, q.multipliers[channel], q.shifts[channel])) +
      static_cast<uint32_t>(q.output_offset));
  return static_cast<int8_t>(clamp(scaled, q.activation_min, q.activation_max));
}

inline uint32_t wrap(int32_t v) { return static_cast<uint32_t>(v); }

// Sums of 4 channels over a window of `rows` x `cols` taps; x and w point at the first valid tap
// of channel 0 of the group; taps of a row are tap_step input bytes and out_c filter bytes apart.
// Rows and Cols > 0 fix the counts at compile time (the unrolled interior 3x3 window).
template <int Rows, int Cols>
inline void sum4(const int8_t* x, const int8_t* w, int32_t rows, int32_t cols, int32_t row_step,
                 int32_t tap_step, int32_t w_row_step, int32_t out_c, uint32_t offsets, int32_t* acc) {
  if (Rows > 0) rows = Rows;
  if (Cols > 0) cols = Cols;
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  for (int32_t r = 0; r < rows; ++r) {
    const int8_t* xr = x;
    const int8_t* wr = w;
    for (int32_t k = 0; k < cols; ++k) {
      const uint32_t xv = load_u32(xr), wv = load_u32(wr);
      const uint32_t x02 = sadd16(sxtb16(xv), offsets), x13 = sadd16(sxtb16_ror8(xv), offsets);
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

}  // namespace

void quantized_depthwise_conv2d(const DepthwiseConv2dParams& p, const int8_t* input,
                                const int8_t* filter, const int32_t* bias, int8_t* output,
                                void* /*scratch*/) {
  const ConvGeometry& g = p.geometry;
  const ConvQuantParams q = p.quant;
  const int32_t in_h = p.input.h, in_w = p.input.w, in_c = p.input.c;
  const int32_t out_c = p.filter.c, kernel_w = p.filter.w;
  const int32_t multiplier = p.depth_multiplier;
  const int32_t offset = q.input_offset;
  const uint32_t offsets = splat16(offset);
  // Channels handled 4 at a time.
  const int32_t paired = multiplier == 1 ? out_c / 4 * 4 : 0;
  const int32_t row_step = g.dilation_h * in_w * in_c, tap_step = g.dilation_w * in_c;
  const int32_t w_row_step = kernel_w * out_c;
  const bool is_3x3 = p.filter.h == 3 && kernel_w == 3;

  for (int32_t n = 0; n < p.output.n; ++n) {
    const int8_t* image = input + int64_t{n} * in_h * in_w * in_c;
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      const int64_t y0 = int64_t{oy} * g.stride_h - g.padding.top;
      const TapRange rows = valid_taps(y0, in_h, p.filter.h, g.dilation_h);
      for (int32_t ox = 0; ox < p.output.w; ++ox) {
        const int64_t x0 = int64_t{ox} * g.stride_w - g.padding.left;
        const TapRange cols = valid_taps(x0, in_w, kernel_w, g.dilation_w);
        int8_t* out = output + ((int64_t{n} * p.output.h + oy) * p.output.w + ox) * out_c;
        const int32_t n_rows = rows.last - rows.first, n_cols = cols.last - cols.first;
        const bool any = n_rows > 0 && n_cols > 0;
        const bool interior_3x3 = is_3x3 && n_rows == 3 && n_cols == 3;
        // First valid tap of channel 0 (only formed when the window has one).
        const int8_t* x_first =
            any ? image + ((y0 + int64_t{rows.first} * g.dilation_h) * in_w +
                           (x0 + int64_t{cols.first} * g.dilation_w)) * in_c
                : image;
        const int8_t* w_first = filter + (int64_t{rows.first} * kernel_w + cols.first) * out_c;
        for (int32_t c = 0; c < paired; c += 4) {
          int32_t sums[4] = {0, 0, 0, 0};
          if (interior_3x3) {
            sum4<3, 3>(x_first + c, w_first + c, 3, 3, row_step, tap_step, w_row_step, out_c, offsets, sums);
          } else if (any) {
            sum4<0, 0>(x_first + c, w_first + c, n_rows, n_cols, row_step, tap_step, w_row_step, out_c,
                       offsets, sums);
          }
          for (int32_t l = 0; l < 4; ++l) {
            const uint32_t b = bias ? wrap(bias[c + l]) : 0u;
            out[c + l] = output_value(static_cast<int32_t>(wrap(sums[l]) + b), q, c + l);
          }
        }
        for (int32_t c = paired; c < out_c;) {
          const int32_t in_channel = c / multiplier;
          if (any && c % multiplier + 4 <= multiplier) {  // 4 outputs of one input channel
            int32_t sums[4];
            sum4_one_input(x_first + in_channel, w_first + c, n_rows, n_cols, row_step, tap_step,
                           w_row_step, out_c, offset, sums);
            for (int32_t l = 0; l < 4; ++l) {
              const uint32_t b = bias ? wrap(bias[c + l]) : 0u;
              out[c + l] = output_value(static_cast<int32_t>(wrap(sums[l]) + b), q, c + l);
            }
            c += 4;
            continue;
          }
          uint32_t acc = bias ? wrap(bias[c]) : 0u;
          for (int32_t kh = rows.first; kh < rows.last; ++kh) {
            const int64_t iy = y0 + int64_t{kh} * g.dilation_h;
            for (int32_t kw = cols.first; kw < cols.last; ++kw) {
              const int64_t ix = x0 + int64_t{kw} * g.dilation_w;
              const int32_t x = image[(iy * in_w + ix) * in_c + in_channel] + offset;
              acc += wrap(x * filter[(int64_t{kh} * kernel_w + kw) * out_c + c]);
            }
          }
          out[c] = output_value(static_cast<int32_t>(acc), q, c);
          ++c;
        }
      }
    }
  }
}

}  // namespace cortexm::dsp

#endif  // CORTEXM_BUILT_ISA == 1
