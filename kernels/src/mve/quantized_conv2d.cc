// MVE variant of quantized_conv2d. Columns stay int8: padded taps hold -input_offset (so that
// x + input_offset is 0 there), and sum (x + off) * w = sum x * w + off * sum w modulo 2^32 like
// the reference's adds; with bias_includes_input_offset the bias already holds off * sum w,
// otherwise each filter row's sum is taken once per call. A 1x1 window without padding reads the
// input rows in place (a matrix multiply over pixels); other windows gather up to 4 columns into
// scratch with predicated vector copies. Per filter row the dot products with the block's columns
// run in one tail-predicated loop (mve_dots.h: 10 instructions per 16 taps of 4 columns; columns
// of at most 16 taps stay in registers across the channels); a last
// block of 1-3 pixels takes 1-3 columns, no thrown-away products. The pixels of one output channel
// are requantized together and scattered to the output. Written over its input
// (quantized_conv2d_in_place_lag), a block's stores land only on the rows of the blocks before it.
#include "variants.h"

#if CORTEXM_BUILT_ISA == 2

#include "conv_window.h"
#include "mve/mve_dots.h"
#include "mve/mve_ops.h"

namespace cortexm::mve {

namespace {

constexpr int32_t kBlockPixels = 4;

// Predicated 16-byte stores: no library calls for the short runs of a window gather.
inline void fill_bytes(int8_t* dst, int8_t value, int32_t count) {
  const int8x16_t v = vdupq_n_s8(value);
  for (int32_t i = 0; i < count; i += 16)
    vstrbq_p_s8(dst + i, v, vctp8q(static_cast<uint32_t>(count - i)));
}

inline void copy_bytes(const int8_t* src, int32_t count, int8_t* dst) {
  for (int32_t i = 0; i < count; i += 16) {
    const mve_pred16_t lanes = vctp8q(static_cast<uint32_t>(count - i));
    vstrbq_p_s8(dst + i, vldrbq_z_s8(src + i, lanes), lanes);
  }
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
  // Byte offsets of the 4 pixels of one output channel in the output.
  const uint32x4_t scatter = vmulq_n_u32(vidupq_n_u32(0, 1), static_cast<uint32_t>(out_c));

  for (int32_t n = 0; n < p.input.n; ++n) {
    const int8_t* image = input + int64_t{n} * p.input.h * p.input.w * p.input.c;
    int8_t* out_image = output + int64_t{n} * pixels * out_c;
    for (int32_t group = 0; group < groups; ++group) {
      for (int32_t first = 0; first < pixels; first += kBlockPixels) {
        const int32_t count = pixels - first < kBlockPixels ? pixels - first : kBlockPixels;
        const int8_t* column[kBlockPixels];
        for (int32_t j = 0; j < count; ++j) {
          const int32_t oy = (first + j) / out_w, ox = (first + j) % out_w;
          if (pointwise) {
            const int64_t iy = int64_t{oy} * p.geometry.stride_h;
            const int64_t ix = int64_t{ox} * p.geometry.stride_w;
            column[j] = image + (iy * p.input.w + ix) * p.input.c + int64_t{group} * length;
          } else {
            int8_t* dst = columns + j * length;
            gather_column(p, image, group, oy, ox, dst, fill, copy_bytes);
            column[j] = dst;
          }
        }
        int8_t* out_block = out_image + int64_t{first} * out_c;
        const int32_t oc_begin = group * out_per_group, oc_end = oc_begin + out_per_group;
        if (folded) {
          if constexpr ((Paths & kConv2dFoldedBias) != 0)
            block_channels<true, Paths>(count, p, filter, bias, column, oc_begin, oc_end, out_block, scatter);
        } else {
          if constexpr ((Paths & kConv2dUnfoldedBias) != 0)
            block_channels<false, Paths>(count, p, filter, bias, column, oc_begin, oc_end, out_block, scatter);
        }
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
