// quantized_conv2d_s16 (int8 filter) and quantized_conv2d_s16w16 (int16 filter): one im2col
// walk over the filter's element type W; only the dot products (s16_dots.h) and DSP's column
// order differ.
#include "cortexm/kernels/quantized_conv2d_s16.h"

#include "conv_window.h"
#include "cortexm/kernels/kernel_isa.h"
#include "cortexm/kernels/quantized_conv2d_s16w16.h"
#include "cortexm/kernels/requantize.h"
#include "s16_dots.h"

namespace cortexm {

namespace {

// The dot products read the column in order except DSP's with int8 weights, which reorder its
// quads for SMLAD (s16_dots.h); in order, a window that is one run of the input is read in place.
template <class W>
constexpr bool kColumnInOrder = CORTEXM_BUILT_ISA != 1 || sizeof(W) == 2;

template <class W>
void prepare_column(int16_t* column, int32_t length) {
  if constexpr (!kColumnInOrder<W>) {
    for (int32_t i = 0; i + 4 <= length; i += 4) {
      const int16_t x1 = column[i + 1];
      column[i + 1] = column[i + 2];
      column[i + 2] = x1;
    }
  } else {
    (void)column;
    (void)length;
  }
}

// MVE with int8 weights: filter rows per pass over a column (each column load feeds this many
// multiply-adds).
constexpr int32_t kMveRows = 4;

#if CORTEXM_BUILT_ISA == 2

// Filter rows per pass over two columns (12 instructions per 48 MACs in the loop, against 10 per
// 32 for dot4; 2 x 4 sums would not fit the core registers).
constexpr int32_t kMvePairRows = 3;

// The dot products of two columns with 3 filter rows `length` apart: sums[j * 3 + r] for column
// j and row r, as s16::dot4.
void dot2x3(const int8_t* __restrict weights, const int16_t* __restrict c0,
            const int16_t* __restrict c1, int32_t length, int64_t* sums) {
  const int8_t* w0 = weights;
  const int8_t* w1 = w0 + length;
  const int8_t* w2 = w1 + length;
  int64_t t00 = 0, t01 = 0, t02 = 0, t10 = 0, t11 = 0, t12 = 0;
  for (int32_t start = 0; start < length; start += s16::kInt32Taps) {
    const int32_t end = s16::block_end(start, length);
    int32_t s00 = 0, s01 = 0, s02 = 0, s10 = 0, s11 = 0, s12 = 0, k = start;
    // Two columns x three output channels.
    const auto accumulate = [&](int16x8_t x0, int16x8_t x1, int16x8_t a, int16x8_t b, int16x8_t c) {
      s00 = vmladavaq_s16(s00, x0, a);
      s01 = vmladavaq_s16(s01, x0, b);
      s02 = vmladavaq_s16(s02, x0, c);
      s10 = vmladavaq_s16(s10, x1, a);
      s11 = vmladavaq_s16(s11, x1, b);
      s12 = vmladavaq_s16(s12, x1, c);
    };
    for (; k + 8 <= end; k += 8) {
      const int16x8_t x0 = vldrhq_s16(c0 + k), x1 = vldrhq_s16(c1 + k);
      const int16x8_t a = vldrbq_s16(w0 + k), b = vldrbq_s16(w1 + k), c = vldrbq_s16(w2 + k);
      accumulate(x0, x1, a, b, c);
    }
    if (k < end) {
      const mve_pred16_t lanes = vctp16q(static_cast<uint32_t>(end - k));
      const int16x8_t x0 = vldrhq_z_s16(c0 + k, lanes), x1 = vldrhq_z_s16(c1 + k, lanes);
      const int16x8_t a = vldrbq_z_s16(w0 + k, lanes), b = vldrbq_z_s16(w1 + k, lanes);
      const int16x8_t c = vldrbq_z_s16(w2 + k, lanes);
      accumulate(x0, x1, a, b, c);
    }
    t00 += s00;
    t01 += s01;
    t02 += s02;
    t10 += s10;
    t11 += s11;
    t12 += s12;
  }
  sums[0] = t00;
  sums[1] = t01;
  sums[2] = t02;
  sums[3] = t10;
  sums[4] = t11;
  sums[5] = t12;
}

#endif

// In the column-in-order variants, the input itself as the column of output pixel (oy, ox) for
// `group` when its window is one row of consecutive taps (1-D convolutions, 1x1 filters) without
// padding; else null. Whether it is does not depend on the group.
template <class W>
const int16_t* window_run(const Conv2dS16Params& p, const int16_t* image, int32_t group,
                          int32_t oy, int32_t ox) {
  if (!kColumnInOrder<W> || p.filter.h != 1) return nullptr;
  const ConvGeometry& g = p.geometry;
  const int32_t in_w = p.input.w, in_c = p.input.c;
  const int32_t kernel_w = p.filter.w, group_c = p.filter.c;
  if (kernel_w != 1 && (g.dilation_w != 1 || group_c != in_c)) return nullptr;
  const int64_t y0 = int64_t{oy} * g.stride_h - g.padding.top;
  const int64_t x0 = int64_t{ox} * g.stride_w - g.padding.left;
  if (y0 < 0 || y0 >= p.input.h || x0 < 0 || x0 + int64_t{kernel_w - 1} * g.dilation_w >= in_w)
    return nullptr;
  return image + (y0 * in_w + x0) * in_c + int64_t{group} * group_c;
}

// The receptive field of output pixel (oy, ox) for `group` in the filter row's (kh, kw, c) order;
// padded taps are 0 (the input zero point). Returns the column: window_run's when there is one,
// else `scratch` filled.
template <class W>
const int16_t* gather_column(const Conv2dS16Params& p, const int16_t* image, int32_t group,
                             int32_t oy, int32_t ox, int16_t* scratch) {
  if (const int16_t* run = window_run<W>(p, image, group, oy, ox)) return run;
  const ConvGeometry& g = p.geometry;
  const int32_t in_w = p.input.w, in_c = p.input.c;
  const int32_t kernel_w = p.filter.w, group_c = p.filter.c;
  const int64_t y0 = int64_t{oy} * g.stride_h - g.padding.top;
  const int64_t x0 = int64_t{ox} * g.stride_w - g.padding.left;
  const TapRange rows = valid_taps(y0, p.input.h, p.filter.h, g.dilation_h);
  const TapRange cols = valid_taps(x0, in_w, kernel_w, g.dilation_w);
  const bool taps_consecutive = kernel_w == 1 || (g.dilation_w == 1 && group_c == in_c);
  int16_t* column = scratch;
  const int32_t row_length = kernel_w * group_c;
  const auto fill = [&column](int32_t count) {
    for (int32_t i = 0; i < count; ++i) *column++ = 0;
  };
  const auto copy = [&column](const int16_t* __restrict src, int32_t count) {
    for (int32_t i = 0; i < count; ++i) column[i] = src[i];
    column += count;
  };
  fill(rows.first * row_length);
  for (int32_t kh = rows.first; kh < rows.last; ++kh) {
    const int64_t iy = y0 + int64_t{kh} * g.dilation_h;
    const int16_t* row = image + iy * in_w * in_c + int64_t{group} * group_c;
    fill(cols.first * group_c);
    if (taps_consecutive) {  // the valid taps of this filter row are one run of the input
      if (cols.last > cols.first)
        copy(row + (x0 + cols.first) * in_c, (cols.last - cols.first) * group_c);
    } else {
      for (int32_t kw = cols.first; kw < cols.last; ++kw)
        copy(row + (x0 + int64_t{kw} * g.dilation_w) * in_c, group_c);
    }
    fill((kernel_w - cols.last) * group_c);
  }
  fill((p.filter.h - rows.last) * row_length);
  return scratch;
}

// Whether every output pixel's window is one run of the input (window_run), so that the
// column-in-order variants never gather into scratch.
bool every_window_is_a_run(const Conv2dS16Params& p) {
  const ConvGeometry& g = p.geometry;
  const int32_t kernel_w = p.filter.w;
  if (p.filter.h != 1 || p.output.h < 1 || p.output.w < 1) return false;
  if (kernel_w != 1 && (g.dilation_w != 1 || p.filter.c != p.input.c)) return false;
  if (g.padding.top != 0 || g.padding.left != 0) return false;
  return int64_t{p.output.h - 1} * g.stride_h < p.input.h &&
         int64_t{p.output.w - 1} * g.stride_w + int64_t{kernel_w - 1} * g.dilation_w < p.input.w;
}

// One column, or none when the variant on `isa` reads the column in order and every window is a
// run.
size_t scratch_size(const Conv2dS16Params& p, bool column_in_order) {
  if (p.filter.h < 1 || p.filter.w < 1 || p.filter.c < 1) return 0;
  if (column_in_order && every_window_is_a_run(p)) return 0;
  const size_t bytes = sizeof(int16_t) * static_cast<size_t>(p.filter.h) * p.filter.w * p.filter.c;
  return (bytes + 3) & ~size_t{3};
}

Error prepare_s16(const Conv2dS16Params& p) {
  CORTEXM_RETURN_IF_ERROR(check_multipliers(p.multipliers, p.shifts, p.filter.n,
                                            "must be given per output channel", kMaxShiftS64));
  // The shared checks with int8-neutral offsets and range; the int16 range is checked below.
  ConvQuantParams common;
  common.multipliers = p.multipliers;
  common.shifts = p.shifts;
  CORTEXM_RETURN_IF_ERROR(validate_grouped_conv(common, p.geometry, p.input, p.filter, p.output));
  return check_activation_range(p.activation_min, p.activation_max, true);
}

// One im2col column per output pixel and group (MVE with int8 weights: two pixels, see dot2x3),
// then the dot products of its filter rows.
template <class W>
void conv_s16(const Conv2dS16Params& p, const int16_t* input, const W* filter, const int64_t* bias,
              int16_t* output, void* scratch) {
  const int32_t groups = p.groups();
  const int32_t out_c = p.filter.n;
  const int32_t out_per_group = out_c / groups;
  const int32_t length = p.filter.h * p.filter.w * p.filter.c;
  const int32_t pixels = p.output.h * p.output.w;
  const int32_t act_min = p.activation_min, act_max = p.activation_max;
  int16_t* scratch_column = static_cast<int16_t*>(scratch);
  // The bias added modulo 2^64, requantized and clamped.
  const auto finish = [&](int64_t sum, int32_t oc) {
    const int64_t acc = static_cast<int64_t>(static_cast<uint64_t>(sum) +
                                             static_cast<uint64_t>(bias ? bias[oc] : 0));
    const int32_t value = requantize_s64(acc, reduce_multiplier(p.multipliers[oc]), p.shifts[oc]);
    return static_cast<int16_t>(value < act_min ? act_min : (value > act_max ? act_max : value));
  };
  // The rows oc.. of the group ending at last_oc for one column: 4 rows per pass on MVE with int8
  // weights, 3 with int16 weights (their 64-bit sums take a core register pair each); then 2 on
  // MVE and DSP with int16 weights (more spill on DSP).
  const auto rows_of_column = [&](const int16_t* column, int32_t oc, int32_t last_oc,
                                  int16_t* out) {
#if CORTEXM_BUILT_ISA == 2
    constexpr int32_t kRows = sizeof(W) == 1 ? kMveRows : 3;
    for (; oc + kRows <= last_oc; oc += kRows) {
      int64_t sums[kRows];
      if constexpr (sizeof(W) == 1) {
        s16::dot4(column, filter + int64_t{oc} * length, length, sums);
      } else {
        s16::dot3(column, filter + int64_t{oc} * length, length, sums);
      }
      for (int32_t r = 0; r < kRows; ++r) out[oc + r] = finish(sums[r], oc + r);
    }
#endif
    if constexpr (sizeof(W) == 2 && CORTEXM_BUILT_ISA != 0) {
      for (; oc + 2 <= last_oc; oc += 2) {
        int64_t sums[2];
        s16::dot2(column, filter + int64_t{oc} * length, length, sums);
        for (int32_t r = 0; r < 2; ++r) out[oc + r] = finish(sums[r], oc + r);
      }
    }
    for (; oc < last_oc; ++oc)
      out[oc] = finish(s16::dot(column, filter + int64_t{oc} * length, length), oc);
  };
  // MVE with int8 weights takes two pixels at once (dot2x3).
  constexpr bool kPairs = CORTEXM_BUILT_ISA == 2 && sizeof(W) == 1;
  for (int32_t n = 0; n < p.input.n; ++n) {
    const int16_t* image = input + int64_t{n} * p.input.h * p.input.w * p.input.c;
    int16_t* out_image = output + int64_t{n} * pixels * out_c;
    for (int32_t pixel = 0; pixel < pixels;) {
      // Two pixels when at most one of them needs the scratch column.
      int32_t count = 1;
      if (kPairs && pixel + 1 < pixels &&
          (window_run<W>(p, image, 0, pixel / p.output.w, pixel % p.output.w) ||
           window_run<W>(p, image, 0, (pixel + 1) / p.output.w, (pixel + 1) % p.output.w)))
        count = 2;
      for (int32_t group = 0; group < groups; ++group) {
        const int16_t* columns[2];
        int16_t* outs[2];
        for (int32_t j = 0; j < count; ++j) {
          const int32_t oy = (pixel + j) / p.output.w, ox = (pixel + j) % p.output.w;
          columns[j] = gather_column<W>(p, image, group, oy, ox, scratch_column);
          outs[j] = out_image + int64_t{pixel + j} * out_c;
        }
        prepare_column<W>(scratch_column, length);  // a reordering variant always gathers
        const int32_t last_oc = (group + 1) * out_per_group;
        int32_t oc = group * out_per_group;
#if CORTEXM_BUILT_ISA == 2
        if constexpr (kPairs) {
          if (count == 2) {
            for (; oc + kMvePairRows <= last_oc; oc += kMvePairRows) {
              int64_t sums[2 * kMvePairRows];
              dot2x3(filter + int64_t{oc} * length, columns[0], columns[1], length, sums);
              for (int32_t j = 0; j < 2; ++j)
                for (int32_t r = 0; r < kMvePairRows; ++r)
                  outs[j][oc + r] = finish(sums[j * kMvePairRows + r], oc + r);
            }
          }
        }
#endif
        for (int32_t j = 0; j < count; ++j) rows_of_column(columns[j], oc, last_oc, outs[j]);
      }
      pixel += count;
    }
  }
}

}  // namespace

Dims4 quantized_conv2d_s16_output_dims(const Conv2dS16Params& p) {
  return conv_output_dims(p.input, p.filter.h, p.filter.w, p.geometry, p.filter.n);
}

Dims4 quantized_conv2d_s16w16_output_dims(const Conv2dS16W16Params& p) {
  return quantized_conv2d_s16_output_dims(p);
}

CORTEXM_PREPARE_STEP Error quantized_conv2d_s16_prepare(const Conv2dS16Params& p) {
  return prepare_s16(p);
}

CORTEXM_PREPARE_STEP Error quantized_conv2d_s16w16_prepare(const Conv2dS16W16Params& p) {
  CORTEXM_RETURN_IF_ERROR(prepare_s16(p));
  const int64_t taps = int64_t{p.filter.h} * p.filter.w * p.filter.c;
  if (taps > kMaxTapsS16W16)
    return invalid("filter_taps", taps, "must be <= 2^16 (KH * KW * C_in / groups: exact 64-bit sums)");
  return kOk;
}

// DSP with int8 weights always gathers (it reorders the column).
size_t quantized_conv2d_s16_scratch_size(const Conv2dS16Params& p, Isa isa) {
  return scratch_size(p, isa != Isa::kDsp);
}

size_t quantized_conv2d_s16w16_scratch_size(const Conv2dS16W16Params& p, Isa) {
  return scratch_size(p, true);
}

void quantized_conv2d_s16(const Conv2dS16Params& p, const int16_t* input, const int8_t* filter,
                          const int64_t* bias, int16_t* output, void* scratch) {
  conv_s16(p, input, filter, bias, output, scratch);
}

void quantized_conv2d_s16w16(const Conv2dS16W16Params& p, const int16_t* input,
                             const int16_t* filter, const int64_t* bias, int16_t* output,
                             void* scratch) {
  conv_s16(p, input, filter, bias, output, scratch);
}

}  // namespace cortexm
