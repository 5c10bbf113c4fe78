#include "cortexm/kernels/quantized_conv2d.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

namespace {

// Output pixels whose columns share one load of each filter row.
constexpr int32_t kBlockPixels = 4;

int32_t column_length(const Conv2dParams& p) { return p.filter.h * p.filter.w * p.filter.c; }

// A 1x1 window without padding reads one input row per output pixel: the row is the column.
bool is_pointwise(const Conv2dParams& p) {
  const Padding2d& pad = p.geometry.padding;
  return p.filter.h == 1 && p.filter.w == 1 && pad.top == 0 && pad.left == 0 &&
         pad.bottom == 0 && pad.right == 0;
}

inline int32_t wrapping_add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}


// Taps [first, last) of a dilated window starting at `origin` that land inside [0, extent).
struct TapRange {
  int32_t first, last;
};

TapRange valid_taps(int64_t origin, int32_t extent, int32_t taps, int32_t dilation) {
  const int64_t span = int64_t{taps - 1} * dilation;
  if (origin >= 0 && origin + span < extent) return {0, taps};  // inside: no division
  int64_t first = origin >= 0 ? 0 : (-origin + dilation - 1) / dilation;
  int64_t last = origin >= extent ? 0 : (extent - origin + dilation - 1) / dilation;
  if (first > taps) first = taps;
  if (last > taps) last = taps;
  if (last < first) last = first;
  return {static_cast<int32_t>(first), static_cast<int32_t>(last)};
}

void fill_zero(int16_t* column, int32_t count) {
  for (int32_t i = 0; i < count; ++i) column[i] = 0;
}

void add_offset(const int8_t* __restrict src, int16_t offset, int32_t count,
                int16_t* __restrict column) {
  for (int32_t i = 0; i < count; ++i) column[i] = static_cast<int16_t>(src[i] + offset);
}

// Writes the receptive field of output pixel (oy, ox) for `group` as int16 with the input offset
// added, padded taps 0, in the (kh, kw, c) order of a filter row.
void gather_column(const Conv2dParams& p, const int8_t* image, int32_t group, int32_t oy,
                   int32_t ox, int16_t* column) {
  const ConvGeometry& g = p.geometry;
  const int32_t in_w = p.input.w, in_c = p.input.c;
  const int32_t kernel_w = p.filter.w, group_c = p.filter.c;
  const int16_t offset = static_cast<int16_t>(p.quant.input_offset);
  const int64_t y0 = int64_t{oy} * g.stride_h - g.padding.top;
  const int64_t x0 = int64_t{ox} * g.stride_w - g.padding.left;
  const TapRange rows = valid_taps(y0, p.input.h, p.filter.h, g.dilation_h);
  const TapRange cols = valid_taps(x0, in_w, kernel_w, g.dilation_w);
  const int32_t row_length = kernel_w * group_c;
  // With unit dilation and all channels in one group, the valid taps of a row are contiguous.
  const bool contiguous = g.dilation_w == 1 && group_c == in_c;

  fill_zero(column, rows.first * row_length);
  column += rows.first * row_length;
  for (int32_t kh = rows.first; kh < rows.last; ++kh) {
    const int64_t iy = y0 + int64_t{kh} * g.dilation_h;
    const int8_t* row = image + iy * in_w * in_c + int64_t{group} * group_c;
    fill_zero(column, cols.first * group_c);
    column += cols.first * group_c;
    if (contiguous) {
      const int32_t count = (cols.last - cols.first) * group_c;
      add_offset(row + (x0 + cols.first) * in_c, offset, count, column);
      column += count;
    } else {
      for (int32_t kw = cols.first; kw < cols.last; ++kw) {
        add_offset(row + (x0 + int64_t{kw} * g.dilation_w) * in_c, offset, group_c, column);
        column += group_c;
      }
    }
    fill_zero(column, (kernel_w - cols.last) * group_c);
    column += (kernel_w - cols.last) * group_c;
  }
  fill_zero(column, (p.filter.h - rows.last) * row_length);
}

// Dot products of one filter row with four columns; GCC -O3 vectorizes the loop (pmaddwd on x86).
void dot_4_columns(const int8_t* __restrict weights, const int16_t* __restrict c0,
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

int32_t dot_1_column(const int8_t* __restrict weights, const int16_t* __restrict column,
                     int32_t length) {
  int32_t sum = 0;
  for (int32_t i = 0; i < length; ++i) sum += column[i] * static_cast<int16_t>(weights[i]);
  return sum;
}

// window_output_size returns int32: the padded input must stay below 2^31 on both axes.
// Names the larger pad of the axis.
Error check_padded_extent(const Dims4& input, const Padding2d& pad) {
  if (int64_t{input.h} + pad.top + pad.bottom > INT32_MAX) {
    const bool top = pad.top >= pad.bottom;
    return invalid("padding", top ? pad.top : pad.bottom,
                   "makes the padded input height 2^31 or more", top ? 0 : 2);
  }
  if (int64_t{input.w} + pad.left + pad.right > INT32_MAX) {
    const bool left = pad.left >= pad.right;
    return invalid("padding", left ? pad.left : pad.right,
                   "makes the padded input width 2^31 or more", left ? 1 : 3);
  }
  return kOk;
}

}  // namespace

Dims4 quantized_conv2d_output_dims(const Conv2dParams& p) {
  const ConvGeometry& g = p.geometry;
  Dims4 out;
  out.n = p.input.n;
  out.h = window_output_size(p.input.h, p.filter.h, g.stride_h, g.dilation_h, g.padding.top,
                             g.padding.bottom);
  out.w = window_output_size(p.input.w, p.filter.w, g.stride_w, g.dilation_w, g.padding.left,
                             g.padding.right);
  out.c = p.filter.n;
  return out;
}

Error quantized_conv2d_prepare(const Conv2dParams& p) {
  if (p.filter.n < 1) return invalid("weight.shape[0]", p.filter.n, "must be >= 1");
  if (p.filter.c < 1) return invalid("weight.shape[3]", p.filter.c, "must be >= 1");
  CORTEXM_RETURN_IF_ERROR(check_padded_extent(p.input, p.geometry.padding));
  CORTEXM_RETURN_IF_ERROR(validate_conv_common(p.quant, p.geometry, p.input, p.filter.h,
                                               p.filter.w, p.output, p.filter.n));
  if (p.input.c % p.filter.c != 0)
    return invalid("weight.shape[3]", p.filter.c, "must divide input.shape[3]");
  if (p.filter.n % p.groups() != 0)
    return invalid("weight.shape[0]", p.filter.n,
                   "must be a multiple of groups = input.shape[3] / weight.shape[3]");
  return kOk;
}

size_t quantized_conv2d_scratch_size(const Conv2dParams& p, Isa /*isa*/) {
  if (p.filter.h < 1 || p.filter.w < 1 || p.filter.c < 1) return 0;
  return sizeof(int16_t) * kBlockPixels * static_cast<size_t>(column_length(p));
}

void quantized_conv2d(const Conv2dParams& p, const int8_t* input, const int8_t* filter,
                      const int32_t* bias, int8_t* output, void* scratch) {
  const bool pointwise = is_pointwise(p);
  const ConvQuantParams q = p.quant;  // a local copy: output stores cannot alias it
  const int16_t offset = static_cast<int16_t>(q.input_offset);
  const int32_t groups = p.groups();
  const int32_t out_c = p.filter.n;
  const int32_t out_per_group = out_c / groups;
  const int32_t length = column_length(p);
  const int32_t out_w = p.output.w;
  const int32_t pixels = p.output.h * out_w;
  int16_t* columns = static_cast<int16_t*>(scratch);
  int16_t* const column[kBlockPixels] = {columns, columns + length, columns + 2 * length,
                                         columns + 3 * length};

  for (int32_t n = 0; n < p.input.n; ++n) {
    const int8_t* image = input + int64_t{n} * p.input.h * p.input.w * p.input.c;
    int8_t* out_image = output + int64_t{n} * pixels * out_c;
    for (int32_t group = 0; group < groups; ++group) {
      for (int32_t first = 0; first < pixels; first += kBlockPixels) {
        const int32_t count = pixels - first < kBlockPixels ? pixels - first : kBlockPixels;
        for (int32_t j = 0; j < count; ++j) {
          const int32_t oy = (first + j) / out_w, ox = (first + j) % out_w;
          if (pointwise) {
            const int64_t iy = int64_t{oy} * p.geometry.stride_h;
            const int64_t ix = int64_t{ox} * p.geometry.stride_w;
            const int8_t* row = image + (iy * p.input.w + ix) * p.input.c;
            add_offset(row + int64_t{group} * length, offset, length, column[j]);
          } else {
            gather_column(p, image, group, oy, ox, column[j]);
          }
        }
        for (int32_t oc = group * out_per_group; oc < (group + 1) * out_per_group; ++oc) {
          const int8_t* weights = filter + int64_t{oc} * length;
          int32_t sums[kBlockPixels];
          if (count == kBlockPixels) {
            dot_4_columns(weights, column[0], column[1], column[2], column[3], length, sums);
          } else {
            for (int32_t j = 0; j < count; ++j) sums[j] = dot_1_column(weights, column[j], length);
          }
          const int32_t b = bias ? bias[oc] : 0;
          const int32_t multiplier = q.multipliers[oc], shift = q.shifts[oc];
          for (int32_t j = 0; j < count; ++j) {
            const int32_t scaled = requantize(wrapping_add(sums[j], b), multiplier, shift);
            out_image[int64_t{first + j} * out_c + oc] = static_cast<int8_t>(
                clamp(wrapping_add(scaled, q.output_offset), q.activation_min, q.activation_max));
          }
        }
      }
    }
  }
}

}  // namespace cortexm
