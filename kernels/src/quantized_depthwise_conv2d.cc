#include "cortexm/kernels/quantized_depthwise_conv2d.h"

#include "conv_window.h"
#include "cortexm/kernels/requantize.h"
#include "variants.h"
#if defined(CORTEXM_HOST_X86)
#include "cortexm/kernels/host_variant.h"
#include "x86/depthwise_s8.h"
#endif

namespace cortexm {

Dims4 quantized_depthwise_conv2d_output_dims(const DepthwiseConv2dParams& p) {
  return conv_output_dims(p.input, p.filter.h, p.filter.w, p.geometry, p.filter.c);
}

CORTEXM_PREPARE_STEP Error quantized_depthwise_conv2d_prepare(const DepthwiseConv2dParams& p) {
  if (p.depth_multiplier < 1)
    return invalid("depth_multiplier", p.depth_multiplier, "must be >= 1");
  if (p.filter.n != 1) return invalid("weight.shape[0]", p.filter.n, "must be 1");
  if (int64_t{p.filter.c} != int64_t{p.input.c} * p.depth_multiplier)
    return invalid("weight.shape[3]", p.filter.c, "must equal input.shape[3] * depth_multiplier");
  CORTEXM_RETURN_IF_ERROR(check_padded_extent(p.input, p.geometry.padding));
  return validate_conv_common(p.quant, p.geometry, p.input, p.filter.h, p.filter.w, p.output,
                              p.filter.c);
}

// The scalar variant's accumulators; the DSP and MVE variants keep them in registers.
size_t quantized_depthwise_conv2d_scratch_size(const DepthwiseConv2dParams& p, Isa isa) {
  if (isa != Isa::kScalar) return 0;
  return p.filter.c > 0 ? sizeof(int32_t) * static_cast<size_t>(p.filter.c) : 0;
}

#if CORTEXM_BUILT_ISA == 0
namespace {

// (x + offset) * w fits int16: |x + offset| <= 255 and |w| <= 128.
inline int16_t tap(int8_t x, int16_t offset, int8_t w) {
  return static_cast<int16_t>(static_cast<int16_t>(x + offset) * w);
}

// One tap for every channel, channels contiguous in input, filter and accumulators.
void accumulate_tap(const int8_t* __restrict x, const int8_t* __restrict w, int16_t offset,
                    int32_t channels, int32_t* __restrict acc) {
  for (int32_t c = 0; c < channels; ++c) acc[c] += tap(x[c], offset, w[c]);
}

// One tap with depth multiplier m: output channel c * m + j reads input channel c.
void accumulate_tap_multiplied(const int8_t* __restrict x, const int8_t* __restrict w,
                               int16_t offset, int32_t in_channels, int32_t multiplier,
                               int32_t* __restrict acc) {
  for (int32_t c = 0; c < in_channels; ++c) {
    const int8_t xc = x[c];
    const int8_t* wc = w + c * multiplier;
    int32_t* ac = acc + c * multiplier;
    for (int32_t j = 0; j < multiplier; ++j) ac[j] += tap(xc, offset, wc[j]);
  }
}

// All nine taps of a 3x3 window inside the image, depth multiplier 1. row0..row2 point at kernel
// rows 0..2 for kw = 0; tap kw is kw * tap_step bytes further. Filter taps are `channels` apart.
void depthwise_3x3(const int8_t* __restrict row0, const int8_t* __restrict row1,
                   const int8_t* __restrict row2, int64_t tap_step,
                   const int8_t* __restrict filter, int16_t offset, int32_t channels,
                   int32_t* __restrict acc) {
  const int8_t* w = filter;
  const int64_t s1 = tap_step, s2 = 2 * tap_step;
  const int32_t c1 = channels, c2 = 2 * channels;
  for (int32_t c = 0; c < channels; ++c) {
    int32_t sum = tap(row0[c], offset, w[c]);
    sum += tap(row0[c + s1], offset, w[c + c1]);
    sum += tap(row0[c + s2], offset, w[c + c2]);
    sum += tap(row1[c], offset, w[c + 3 * channels]);
    sum += tap(row1[c + s1], offset, w[c + 4 * channels]);
    sum += tap(row1[c + s2], offset, w[c + 5 * channels]);
    sum += tap(row2[c], offset, w[c + 6 * channels]);
    sum += tap(row2[c + s1], offset, w[c + 7 * channels]);
    sum += tap(row2[c + s2], offset, w[c + 8 * channels]);
    acc[c] = sum;
  }
}

// Adds bias, requantizes, offsets and clamps one output pixel's channels.
void requantize_channels(const int32_t* __restrict acc, const int32_t* __restrict bias,
                         const int32_t* __restrict multipliers, const int32_t* __restrict shifts,
                         int32_t channels, int32_t output_offset, int32_t activation_min,
                         int32_t activation_max, int8_t* __restrict out) {
  for (int32_t c = 0; c < channels; ++c) {
    const int32_t sum = wrapping_add(acc[c], bias ? bias[c] : 0);
    const int32_t scaled = wrapping_add(requantize(sum, multipliers[c], shifts[c]), output_offset);
    out[c] = static_cast<int8_t>(clamp(scaled, activation_min, activation_max));
  }
}

void depthwise_scalar(const DepthwiseConv2dParams& p, const int8_t* input, const int8_t* filter,
                      const int32_t* bias, int8_t* output, void* scratch) {
  const ConvGeometry& g = p.geometry;
  const ConvQuantParams& q = p.quant;
  const int32_t in_h = p.input.h, in_w = p.input.w, in_c = p.input.c;
  const int32_t out_c = p.filter.c, kernel_h = p.filter.h, kernel_w = p.filter.w;
  const int32_t multiplier = p.depth_multiplier;
  const int16_t offset = static_cast<int16_t>(q.input_offset);
  const bool is_3x3 = kernel_h == 3 && kernel_w == 3 && multiplier == 1;
  int32_t* acc = static_cast<int32_t*>(scratch);

  for (int32_t n = 0; n < p.output.n; ++n) {
    const int8_t* image = input + int64_t{n} * in_h * in_w * in_c;
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      const int64_t y0 = int64_t{oy} * g.stride_h - g.padding.top;
      const TapRange rows = valid_taps(y0, in_h, kernel_h, g.dilation_h);
      for (int32_t ox = 0; ox < p.output.w; ++ox) {
        const int64_t x0 = int64_t{ox} * g.stride_w - g.padding.left;
        const TapRange cols = valid_taps(x0, in_w, kernel_w, g.dilation_w);
        const bool interior =
            rows.first == 0 && rows.last == kernel_h && cols.first == 0 && cols.last == kernel_w;
        if (is_3x3 && interior) {
          const int8_t* row0 = image + (y0 * in_w + x0) * in_c;
          const int64_t row_step = int64_t{g.dilation_h} * in_w * in_c;
          depthwise_3x3(row0, row0 + row_step, row0 + 2 * row_step,
                        int64_t{g.dilation_w} * in_c, filter, offset, out_c, acc);
        } else {
          for (int32_t c = 0; c < out_c; ++c) acc[c] = 0;
          for (int32_t kh = rows.first; kh < rows.last; ++kh) {
            const int64_t iy = y0 + int64_t{kh} * g.dilation_h;
            for (int32_t kw = cols.first; kw < cols.last; ++kw) {
              const int64_t ix = x0 + int64_t{kw} * g.dilation_w;
              const int8_t* x = image + (iy * in_w + ix) * in_c;
              const int8_t* w = filter + (int64_t{kh} * kernel_w + kw) * out_c;
              if (multiplier == 1) {
                accumulate_tap(x, w, offset, out_c, acc);
              } else {
                accumulate_tap_multiplied(x, w, offset, in_c, multiplier, acc);
              }
            }
          }
        }
        int8_t* out = output + ((int64_t{n} * p.output.h + oy) * p.output.w + ox) * out_c;
        requantize_channels(acc, bias, q.multipliers, q.shifts, out_c, q.output_offset,
                            q.activation_min, q.activation_max, out);
      }
    }
  }
}

}  // namespace
#endif

void quantized_depthwise_conv2d(const DepthwiseConv2dParams& p, const int8_t* input,
                                const int8_t* filter, const int32_t* bias, int8_t* output,
                                void* scratch) {
#if CORTEXM_BUILT_ISA == 2
  mve::quantized_depthwise_conv2d(p, input, filter, bias, output, scratch);
#elif CORTEXM_BUILT_ISA == 1
  dsp::quantized_depthwise_conv2d(p, input, filter, bias, output, scratch);
#else
#if defined(CORTEXM_HOST_X86)
  const HostVariant variant = resolve_host_variant(p.host_variant);  // one for the whole call
  if (p.depth_multiplier == 1 && variant == HostVariant::kAvx512Vnni) {
    x86::depthwise_s8_avx512(p, input, filter, bias, output);
    return;
  }
  if (p.depth_multiplier == 1 && variant == HostVariant::kAvx2) {
    x86::depthwise_s8_avx2(p, input, filter, bias, output);
    return;
  }
#endif
  depthwise_scalar(p, input, filter, bias, output, scratch);
#endif
}

template <uint32_t Paths>
void quantized_depthwise_conv2d_on_paths(const DepthwiseConv2dParams& p, const int8_t* input,
                                         const int8_t* filter, const int32_t* bias, int8_t* output,
                                         void* scratch) {
#if CORTEXM_BUILT_ISA == 2
  mve::quantized_depthwise_conv2d_on_paths<Paths>(p, input, filter, bias, output, scratch);
#else
  quantized_depthwise_conv2d(p, input, filter, bias, output, scratch);
#endif
}

#define CORTEXM_DEPTHWISE_ON_PATHS(paths)                   \
  template void quantized_depthwise_conv2d_on_paths<paths>( \
      const DepthwiseConv2dParams&, const int8_t*, const int8_t*, const int32_t*, int8_t*, void*);
CORTEXM_EACH_SUBSET_OF_3_BITS(CORTEXM_DEPTHWISE_ON_PATHS)
#undef CORTEXM_DEPTHWISE_ON_PATHS
static_assert(kDepthwiseConv2dAllPaths == 7, "instantiate quantized_depthwise_conv2d_on_paths for every subset");

}  // namespace cortexm
