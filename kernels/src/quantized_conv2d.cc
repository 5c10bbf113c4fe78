#include "cortexm/kernels/quantized_conv2d.h"

#include <cstring>

#include "conv_int16_columns.h"
#include "cortexm/kernels/requantize.h"
#include "variants.h"
#if defined(CORTEXM_HOST_X86)
#include "cortexm/kernels/host_variant.h"
#include "x86/gemm_s8.h"
#include "x86/packed_gemm_s8.h"
#endif

namespace cortexm {

namespace {

// Plain dot products of a filter row with int16 columns in gather order; GCC -O3 vectorizes
// them (pmaddwd on x86).
struct ScalarDots {
  static void prepare(int16_t*, int32_t) {}

  static void dots(const int8_t* const* weights, int32_t rows, const int16_t* const* columns,
                   int32_t count, int32_t length, int32_t (*sums)[kConvBlockPixels]) {
    for (int32_t r = 0; r < rows; ++r) {
      if (count == kConvBlockPixels) {
        dot4(weights[r], columns[0], columns[1], columns[2], columns[3], length, sums[r]);
      } else {
        for (int32_t j = 0; j < count; ++j) sums[r][j] = dot1(weights[r], columns[j], length);
      }
    }
  }

  static void dot4(const int8_t* __restrict weights, const int16_t* __restrict c0,
                   const int16_t* __restrict c1, const int16_t* __restrict c2,
                   const int16_t* __restrict c3, int32_t length, int32_t* __restrict sums) {
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int32_t i = 0; i < length; ++i) {
      const int16_t w = weights[i];
      s0 += c0[i] * w;
      s1 += c1[i] * w;
      s2 += c2[i] * w;
      s3 += c3[i] * w;
    }
    sums[0] = s0;
    sums[1] = s1;
    sums[2] = s2;
    sums[3] = s3;
  }

  static int32_t dot1(const int8_t* __restrict weights, const int16_t* __restrict column,
                      int32_t length) {
    int32_t sum = 0;
    for (int32_t i = 0; i < length; ++i) sum += column[i] * static_cast<int16_t>(weights[i]);
    return sum;
  }
};

#if CORTEXM_BUILT_ISA == 0
// A 1x1 window without padding: each output pixel's taps are one run of its input pixel's group
// channels, read in place with the offset added on the fly (no scratch). 4 pixels per pass share
// each load of a filter row. Sums wrap modulo 2^32 like the target's adds. Written over its input
// (quantized_conv2d_in_place_lag), a block's stores land only on the rows of the blocks before it.
inline void dot4_in_place(const int8_t* __restrict weights, const int8_t* __restrict x0,
                          const int8_t* __restrict x1, const int8_t* __restrict x2,
                          const int8_t* __restrict x3, int32_t offset, int32_t length,
                          int32_t* __restrict sums) {
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (int32_t i = 0; i < length; ++i) {
    const int32_t w = weights[i];
    s0 += (x0[i] + offset) * w;
    s1 += (x1[i] + offset) * w;
    s2 += (x2[i] + offset) * w;
    s3 += (x3[i] + offset) * w;
  }
  sums[0] = s0;
  sums[1] = s1;
  sums[2] = s2;
  sums[3] = s3;
}

inline int32_t dot1_in_place(const int8_t* __restrict weights, const int8_t* __restrict x, int32_t offset,
                             int32_t length) {
  int32_t sum = 0;
  for (int32_t i = 0; i < length; ++i) sum += (x[i] + offset) * weights[i];
  return sum;
}

void pointwise_in_place(const Conv2dParams& p, const int8_t* input, const int8_t* filter,
                        const int32_t* bias, int8_t* output) {
  const ConvQuantParams q = p.quant;  // a local copy: output stores cannot alias it
  const int32_t offset = p.bias_includes_input_offset ? 0 : q.input_offset;
  const int32_t groups = p.groups();
  const int32_t out_c = p.filter.n;
  const int32_t out_per_group = out_c / groups;
  const int32_t length = conv_column_length(p);
  const int32_t out_w = p.output.w;
  const int32_t pixels = p.output.h * out_w;
  for (int32_t n = 0; n < p.input.n; ++n) {
    const int8_t* image = input + int64_t{n} * p.input.h * p.input.w * p.input.c;
    int8_t* out_image = output + int64_t{n} * pixels * out_c;
    for (int32_t group = 0; group < groups; ++group) {
      for (int32_t first = 0; first < pixels; first += kConvBlockPixels) {
        const int32_t count = pixels - first < kConvBlockPixels ? pixels - first : kConvBlockPixels;
        const int8_t* taps[kConvBlockPixels];
        for (int32_t j = 0; j < kConvBlockPixels; ++j) {
          const int32_t pixel = first + (j < count ? j : 0);
          taps[j] = pointwise_row(p, image, group, pixel / out_w, pixel % out_w);
        }
        for (int32_t oc = group * out_per_group; oc < (group + 1) * out_per_group; ++oc) {
          const int8_t* weights = filter + int64_t{oc} * length;
          int32_t sums[kConvBlockPixels];
          if (count == kConvBlockPixels) {
            dot4_in_place(weights, taps[0], taps[1], taps[2], taps[3], offset, length, sums);
          } else {
            for (int32_t j = 0; j < count; ++j) sums[j] = dot1_in_place(weights, taps[j], offset, length);
          }
          const uint32_t b = bias ? static_cast<uint32_t>(bias[oc]) : 0u;
          for (int32_t j = 0; j < count; ++j) {
            const int32_t acc = static_cast<int32_t>(static_cast<uint32_t>(sums[j]) + b);
            const int32_t scaled = static_cast<int32_t>(
                static_cast<uint32_t>(requantize(acc, q.multipliers[oc], q.shifts[oc])) +
                static_cast<uint32_t>(q.output_offset));
            out_image[int64_t{first + j} * out_c + oc] =
                static_cast<int8_t>(clamp(scaled, q.activation_min, q.activation_max));
          }
        }
      }
    }
  }
}

#if defined(CORTEXM_HOST_X86)
// One group's product on the conv's variant (never the scalar one): on the weights packed at load
// when they were packed for that variant, otherwise on the filter as it is.
struct GroupProduct {
  x86::GemmS8 g;
  HostVariant variant;
  const void* packed;  // the group's weights packed for `variant`, or null

  void run(const int8_t* a, int64_t a_stride, int32_t rows, int8_t* out) {
    g.a = a;
    g.a_stride = a_stride;
    g.rows = rows;
    g.out = out;
    if (packed) x86::packed_gemm_s8(g, packed, variant);
    else x86::gemm_s8(g, variant);
  }
};

// In place (output below input, one group): the product over runs of rows, each as long as the
// gap between the output written so far and the input still to read holds its outputs (the
// products sweep their columns once per block of them, so a run's outputs may land only on rows
// before it). At least one row per run (quantized_conv2d_in_place_lag's lag leaves room for 4).
void pointwise_runs_in_place(GroupProduct& product, const int8_t* input, int32_t in_c, int8_t* output,
                             int32_t out_c, int32_t rows) {
  // Bytes, > 0 for an output written in place.
  const int64_t gap = static_cast<int64_t>(reinterpret_cast<uintptr_t>(input) - reinterpret_cast<uintptr_t>(output));
  for (int32_t first = 0; first < rows;) {
    const int64_t fit = (gap + int64_t{first} * in_c) / out_c - first;  // rows whose outputs end below row `first`
    const int32_t run = static_cast<int32_t>(fit < 1 ? 1 : fit < rows - first ? fit : rows - first);
    product.run(input + int64_t{first} * in_c, in_c, run, output + int64_t{first} * out_c);
    first += run;
  }
}

// The conv on the host's x86 variant as int8 matrix products (false when that variant is the
// scalar one): a pointwise conv over its input rows as they are, one product per group over every
// image (per image and output row when strided; in runs when written over its input); other
// windows over int8 im2col columns of 8 output pixels at a time, of any images, in the scalar
// kernel's scratch (4 int16 columns), padded taps -input_offset so that they add 0. (Few pixels per image, as in wav2letter, then still make
// products of 8 rows: each pass over the weights serves 8 pixels.)
bool conv_on_host_simd(const Conv2dParams& p, HostVariant variant, const int8_t* input, const int8_t* filter,
                       const int32_t* bias, int8_t* output, void* scratch) {
  if (variant == HostVariant::kScalar) return false;
  const int32_t groups = p.groups();
  const int32_t out_c = p.filter.n;
  const int32_t out_per_group = out_c / groups;
  const int32_t length = conv_column_length(p);
  const int32_t in_c = p.input.c;
  const int32_t out_w = p.output.w;
  const int32_t pixels = p.output.h * out_w;
  const bool pointwise = is_pointwise(p);
  const bool unit_stride = p.geometry.stride_h == 1 && p.geometry.stride_w == 1;
  GroupProduct product{};
  product.variant = variant;
  x86::GemmS8& g = product.g;
  g.depth = length;
  g.cols = out_per_group;
  g.offset = p.bias_includes_input_offset ? 0 : p.quant.input_offset;
  g.per_channel = true;
  g.output_offset = p.quant.output_offset;
  g.activation_min = p.quant.activation_min;
  g.activation_max = p.quant.activation_max;
  g.out_stride = out_c;
  constexpr int32_t kColumns = 2 * kConvBlockPixels;
  int8_t* const columns = static_cast<int8_t*>(scratch);
  const int8_t pad = static_cast<int8_t>(-p.quant.input_offset);
  const auto fill = [pad](int8_t* dst, int32_t count) { std::memset(dst, pad, static_cast<size_t>(count)); };
  const auto copy = [](const int8_t* src, int32_t count, int8_t* dst) { std::memcpy(dst, src, static_cast<size_t>(count)); };
  const int64_t image_bytes = int64_t{p.input.h} * p.input.w * in_c;
  const int64_t all_pixels = int64_t{p.input.n} * pixels;
  for (int32_t group = 0; group < groups; ++group) {
    const int32_t first_oc = group * out_per_group;
    g.w = filter + int64_t{first_oc} * length;
    g.bias = bias ? bias + first_oc : nullptr;
    g.multipliers = p.quant.multipliers + first_oc;
    g.shifts = p.quant.shifts + first_oc;
    product.packed = x86::packed_group(p.host_packed, group, length, out_per_group, variant);
    if (pointwise && unit_stride && all_pixels <= INT32_MAX) {  // every pixel's row follows the last one
      const uintptr_t in_at = reinterpret_cast<uintptr_t>(input), out_at = reinterpret_cast<uintptr_t>(output);
      if (out_at < in_at + all_pixels * in_c && in_at < out_at + all_pixels * out_c) {
        pointwise_runs_in_place(product, input, in_c, output, out_c, static_cast<int32_t>(all_pixels));
        continue;
      }
      product.run(input + int64_t{group} * length, in_c, static_cast<int32_t>(all_pixels), output + first_oc);
      continue;
    }
    if (pointwise) {  // one output row at a time
      for (int32_t n = 0; n < p.input.n; ++n)
        for (int32_t oy = 0; oy < p.output.h; ++oy)
          product.run(input + n * image_bytes + int64_t{oy} * p.geometry.stride_h * p.input.w * in_c +
                          int64_t{group} * length,
                      int64_t{p.geometry.stride_w} * in_c, out_w,
                      output + (int64_t{n} * pixels + int64_t{oy} * out_w) * out_c + first_oc);
      continue;
    }
    for (int64_t first = 0; first < all_pixels; first += kColumns) {
      const int32_t rows = static_cast<int32_t>(all_pixels - first < kColumns ? all_pixels - first : kColumns);
      for (int32_t j = 0; j < rows; ++j) {
        const int64_t n = (first + j) / pixels;
        const int32_t pixel = static_cast<int32_t>((first + j) % pixels);
        gather_column(p, input + n * image_bytes, group, pixel / out_w, pixel % out_w, columns + int64_t{j} * length,
                      fill, copy);
      }
      product.run(columns, length, rows, output + first * out_c + first_oc);
    }
  }
  return true;
}
#endif
#endif

}  // namespace

Dims4 quantized_conv2d_output_dims(const Conv2dParams& p) {
  return conv_output_dims(p.input, p.filter.h, p.filter.w, p.geometry, p.filter.n);
}

CORTEXM_PREPARE_STEP Error quantized_conv2d_prepare(const Conv2dParams& p) {
  return validate_grouped_conv(p.quant, p.geometry, p.input, p.filter, p.output);
}

// Scalar: 4 int16 columns. DSP: 3 int16 columns. MVE: 4 int8 columns. None for a 1x1 window
// without padding: scalar and MVE read it in place, DSP keeps its columns in the output.
size_t quantized_conv2d_scratch_size(const Conv2dParams& p, Isa isa) {
  if (p.filter.h < 1 || p.filter.w < 1 || p.filter.c < 1) return 0;
  const size_t length = static_cast<size_t>(conv_column_length(p));
  if (is_pointwise(p)) return 0;
  if (isa == Isa::kMve) return kConvBlockPixels * length;
  if (isa == Isa::kDsp) return sizeof(int16_t) * 3 * length;
  return sizeof(int16_t) * kConvBlockPixels * length;
}

void quantized_conv2d_fold_bias(const Conv2dParams& p, const int8_t* filter, const int32_t* bias,
                                int32_t* folded) {
  const int32_t length = conv_column_length(p);
  for (int32_t oc = 0; oc < p.filter.n; ++oc) {
    const int8_t* row = filter + int64_t{oc} * length;
    uint32_t weight_sum = 0;
    for (int32_t k = 0; k < length; ++k) weight_sum += static_cast<uint32_t>(row[k]);
    const uint32_t b = bias ? static_cast<uint32_t>(bias[oc]) : 0u;
    folded[oc] = static_cast<int32_t>(b + static_cast<uint32_t>(p.quant.input_offset) * weight_sum);
  }
}

size_t quantized_conv2d_host_packed_size(const Conv2dParams& p) {
#if defined(CORTEXM_HOST_X86) && !(defined(CORTEXM_SINGLE_ROUNDING) && CORTEXM_SINGLE_ROUNDING)
  if (p.filter.c < 1 || p.groups() < 1) return 0;
  return x86::packed_weights_size(p.groups(), conv_column_length(p), p.filter.n / p.groups(),
                                  x86::packing_variant(p.host_variant));
#else
  static_cast<void>(p);
  return 0;
#endif
}

void quantized_conv2d_host_pack(const Conv2dParams& p, const int8_t* filter, const int32_t* bias, void* packed) {
#if defined(CORTEXM_HOST_X86)
  x86::pack_weights(filter, p.groups(), conv_column_length(p), p.filter.n / p.groups(), bias,
                    p.bias_includes_input_offset ? 0 : p.quant.input_offset, x86::packing_variant(p.host_variant),
                    packed);
#else
  static_cast<void>(p);
  static_cast<void>(filter);
  static_cast<void>(bias);
  static_cast<void>(packed);
#endif
}

void quantized_conv2d(const Conv2dParams& p, const int8_t* input, const int8_t* filter,
                      const int32_t* bias, int8_t* output, void* scratch) {
#if CORTEXM_BUILT_ISA == 2
  mve::quantized_conv2d(p, input, filter, bias, output, scratch);
#elif CORTEXM_BUILT_ISA == 1
  dsp::quantized_conv2d(p, input, filter, bias, output, scratch);
#else
#if defined(CORTEXM_HOST_X86)
  if (conv_on_host_simd(p, resolve_host_variant(p.host_variant), input, filter, bias, output, scratch)) return;
#endif
  if (is_pointwise(p)) {
    pointwise_in_place(p, input, filter, bias, output);
    return;
  }
  conv2d_int16_columns<ScalarDots>(p, input, filter, bias, output, scratch);
#endif
}

template <uint32_t Paths>
void quantized_conv2d_on_paths(const Conv2dParams& p, const int8_t* input, const int8_t* filter,
                               const int32_t* bias, int8_t* output, void* scratch) {
#if CORTEXM_BUILT_ISA == 2
  mve::quantized_conv2d_on_paths<Paths>(p, input, filter, bias, output, scratch);
#else
  quantized_conv2d(p, input, filter, bias, output, scratch);
#endif
}

#define CORTEXM_CONV2D_ON_PATHS(paths) \
  template void quantized_conv2d_on_paths<paths>(const Conv2dParams&, const int8_t*, const int8_t*, const int32_t*, int8_t*, void*);
CORTEXM_EACH_SUBSET_OF_4_BITS(CORTEXM_CONV2D_ON_PATHS)
#undef CORTEXM_CONV2D_ON_PATHS
static_assert(kConv2dAllPaths == 15, "instantiate quantized_conv2d_on_paths for every subset");

}  // namespace cortexm
