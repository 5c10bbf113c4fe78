// MVE variant of quantized_depthwise_conv2d: 4 output channels per vector of int32 lanes; each
// valid tap adds (x + input_offset) * w to them (VLDRB widening loads, a gather load for depth
// multipliers above 1), then the 4 channels are requantized together with their own multipliers
// and shifts. Interior 3x3 windows (depth multiplier 1) run the nine taps unrolled.
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
        const bool interior =
            rows.first == 0 && rows.last == kernel_h && cols.first == 0 && cols.last == kernel_w;
        if (is_3x3 && interior) {
          const int8_t* row0 = image + (y0 * in_w + x0) * in_c;
          for (int32_t c = 0; c < out_c; c += 4) {
            const mve_pred16_t lanes = vctp32q(static_cast<uint32_t>(out_c - c));
            int32x4_t acc = bias ? vldrwq_z_s32(bias + c, lanes) : vdupq_n_s32(0);
            for (int32_t r = 0; r < 3; ++r) {
              const int8_t* x = row0 + r * row_step + c;
              const int8_t* w = filter + r * 3 * out_c + c;
              acc = tap(acc, vldrbq_z_s32(x, lanes), offset, w, lanes);
              acc = tap(acc, vldrbq_z_s32(x + tap_step, lanes), offset, w + out_c, lanes);
              acc = tap(acc, vldrbq_z_s32(x + 2 * tap_step, lanes), offset, w + 2 * out_c, lanes);
            }
            finish(acc, q, c, lanes, out);
          }
          continue;
        }
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
        for (int32_t c = 0; c < out_c; c += 4) {
          const mve_pred16_t lanes = vctp32q(static_cast<uint32_t>(out_c - c));
          int32x4_t acc = bias ? vldrwq_z_s32(bias + c, lanes) : vdupq_n_s32(0);
          if (multiplier == 1) {
            const int8_t* x = x_first + c;
            const int8_t* w = w_first + c;
            for (int32_t r = 0; r < n_rows; ++r, x += row_step, w += w_row_step)
              for (int32_t k = 0; k < n_cols; ++k)
                acc = tap(acc, vldrbq_z_s32(x + k * tap_step, lanes), offset, w + k * out_c, lanes);
          } else {
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
          }
          finish(acc, q, c, lanes, out);
        }
      }
    }
  }
}

}  // namespace cortexm::mve

#endif  // CORTEXM_BUILT_ISA == 2
