// The convolution driver of the scalar and DSP variants: im2col of 4 output pixels into int16
// columns (input + input_offset, padded taps 0; with bias_includes_input_offset the input as it
// is, padded taps -input_offset), then per output channel the dot products of its
// filter row with the columns, requantized. `Dots` supplies the arithmetic:
//   Dots::prepare(column, length)  rearranges a gathered column for the dot products;
//   Dots::dot4(weights, c0, c1, c2, c3, length, sums) and Dots::dot1(weights, column, length).
// Sums wrap modulo 2^32 like the target's adds; the bias is added modulo 2^32 after them.
#pragma once

#include "conv_window.h"
#include "cortexm/kernels/requantize.h"

namespace cortexm {

// Output pixels whose columns share one load of each filter row.
constexpr int32_t kConvBlockPixels = 4;

inline int32_t conv_column_length(const Conv2dParams& p) {
  return p.filter.h * p.filter.w * p.filter.c;
}

template <typename Dots>
void conv2d_int16_columns(const Conv2dParams& p, const int8_t* input, const int8_t* filter,
                          const int32_t* bias, int8_t* output, void* scratch) {
  const bool pointwise = is_pointwise(p);
  const ConvQuantParams q = p.quant;  // a local copy: output stores cannot alias it
  const bool folded = p.bias_includes_input_offset;
  const int16_t offset = folded ? int16_t{0} : static_cast<int16_t>(q.input_offset);
  const int16_t pad = folded ? static_cast<int16_t>(-q.input_offset) : int16_t{0};
  const int32_t groups = p.groups();
  const int32_t out_c = p.filter.n;
  const int32_t out_per_group = out_c / groups;
  const int32_t length = conv_column_length(p);
  const int32_t out_w = p.output.w;
  const int32_t pixels = p.output.h * out_w;
  int16_t* columns = static_cast<int16_t*>(scratch);
  int16_t* const column[kConvBlockPixels] = {columns, columns + length, columns + 2 * length,
                                             columns + 3 * length};
  const auto fill = [pad](int16_t* dst, int32_t count) {
    for (int32_t i = 0; i < count; ++i) dst[i] = pad;
  };
  const auto copy = [offset](const int8_t* __restrict src, int32_t count, int16_t* __restrict dst) {
    for (int32_t i = 0; i < count; ++i) dst[i] = static_cast<int16_t>(src[i] + offset);
  };

  for (int32_t n = 0; n < p.input.n; ++n) {
    const int8_t* image = input + int64_t{n} * p.input.h * p.input.w * p.input.c;
    int8_t* out_image = output + int64_t{n} * pixels * out_c;
    for (int32_t group = 0; group < groups; ++group) {
      for (int32_t first = 0; first < pixels; first += kConvBlockPixels) {
        const int32_t count = pixels - first < kConvBlockPixels ? pixels - first : kConvBlockPixels;
        for (int32_t j = 0; j < count; ++j) {
          const int32_t oy = (first + j) / out_w, ox = (first + j) % out_w;
          if (pointwise) {
            copy(pointwise_row(p, image, group, oy, ox), length, column[j]);
          } else {
            gather_column(p, image, group, oy, ox, column[j], fill, copy);
          }
          Dots::prepare(column[j], length);
        }
        const int32_t last_oc = (group + 1) * out_per_group;
        for (int32_t oc = group * out_per_group; oc < last_oc; oc += 2) {
          const int32_t rows = last_oc - oc >= 2 ? 2 : 1;
          const int8_t* const weights[2] = {filter + int64_t{oc} * length,
                                            filter + int64_t{oc + rows - 1} * length};
          int32_t sums[2][kConvBlockPixels];
          Dots::dots(weights, rows, column, count, length, sums);
          for (int32_t r = 0; r < rows; ++r) {
            const uint32_t b = bias ? static_cast<uint32_t>(bias[oc + r]) : 0u;
            const int32_t multiplier = q.multipliers[oc + r], shift = q.shifts[oc + r];
            for (int32_t j = 0; j < count; ++j) {
              const int32_t acc = static_cast<int32_t>(static_cast<uint32_t>(sums[r][j]) + b);
              const int32_t scaled = static_cast<int32_t>(
                  static_cast<uint32_t>(requantize(acc, multiplier, shift)) +
                  static_cast<uint32_t>(q.output_offset));
              out_image[int64_t{first + j} * out_c + oc + r] =
                  static_cast<int8_t>(clamp(scaled, q.activation_min, q.activation_max));
            }
          }
        }
      }
    }
  }
}

}  // namespace cortexm
