// Parameters shared by the convolution kernels (regular, grouped, depthwise).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cortexm/kernels/isa.h"
#include "cortexm/kernels/shape.h"
#include "cortexm/kernels/status.h"

namespace cortexm {

struct ConvQuantParams {
  int32_t input_offset = 0;   // -input zero point, in [-127, 128]
  int32_t output_offset = 0;  // +output zero point, in [-128, 127]
  int32_t activation_min = -128;
  int32_t activation_max = 127;
  const int32_t* multipliers = nullptr;  // one per output channel, in [0, 2^31)
  const int32_t* shifts = nullptr;       // one per output channel, in [-31, 30]
};

struct ConvGeometry {
  int32_t stride_h = 1, stride_w = 1;
  int32_t dilation_h = 1, dilation_w = 1;
  Padding2d padding;
};

// A convolution attribute (stride, padding, dilation, output_padding) as (h, w): a 2-D
// convolution's one value (for both) or two; a 1-D convolution, run as 2-D with H = 1, has one:
// w, with h = one_d_h (1 for stride and dilation, 0 for padding). The one 1-D -> 2-D rule of the
// graph op, its lowering and the kernels' params; false for another count.
constexpr bool conv_spatial_pair(const int64_t* values, size_t count, bool one_d, int64_t one_d_h,
                                 int64_t* h, int64_t* w) {
  if (one_d ? count != 1 : count != 1 && count != 2) return false;
  *h = one_d ? one_d_h : values[0];
  *w = values[count - 1];
  return true;
}

// The window of any convolution: stride and dilation >= 1, padding (top, left, bottom, right)
// >= 0. The one check of those ranges, from the graph op to the kernels' prepare: names the first
// value out of range.
constexpr Error check_conv_window(int64_t stride_h, int64_t stride_w, int64_t dilation_h,
                                  int64_t dilation_w, int64_t top, int64_t left, int64_t bottom,
                                  int64_t right) {
  if (stride_h < 1) return invalid("stride", stride_h, "must be >= 1", 0);
  if (stride_w < 1) return invalid("stride", stride_w, "must be >= 1", 1);
  if (dilation_h < 1) return invalid("dilation", dilation_h, "must be >= 1", 0);
  if (dilation_w < 1) return invalid("dilation", dilation_w, "must be >= 1", 1);
  if (top < 0) return invalid("padding", top, "must be >= 0", 0);
  if (left < 0) return invalid("padding", left, "must be >= 0", 1);
  if (bottom < 0) return invalid("padding", bottom, "must be >= 0", 2);
  if (right < 0) return invalid("padding", right, "must be >= 0", 3);
  return kOk;
}

constexpr Error check_conv_window(const ConvGeometry& g) {
  return check_conv_window(g.stride_h, g.stride_w, g.dilation_h, g.dilation_w, g.padding.top,
                           g.padding.left, g.padding.bottom, g.padding.right);
}

// window_output_size returns int32: the padded input must stay below 2^31 on both axes.
// Names the larger pad of the axis.
Error check_padded_extent(const Dims4& input, const Padding2d& pad);

// {batch, output height, output width, output_channels} of a convolution window over `input`.
Dims4 conv_output_dims(const Dims4& input, int32_t kernel_h, int32_t kernel_w,
                       const ConvGeometry& geometry, int32_t output_channels);

// Validates the parts every convolution shares: offsets, activation range, per-channel
// multipliers and shifts, stride, dilation and padding, and that output == the computed output.
Error validate_conv_common(const ConvQuantParams& quant, const ConvGeometry& geometry,
                           const Dims4& input, int32_t kernel_h, int32_t kernel_w,
                           const Dims4& output, int32_t output_channels);

// validate_conv_common for a grouped convolution with an OHWI filter [C_out, KH, KW, C_in / groups]
// (groups = input C / filter C), after the filter extents and the padded input extent.
Error validate_grouped_conv(const ConvQuantParams& quant, const ConvGeometry& geometry,
                            const Dims4& input, const Dims4& filter, const Dims4& output);

// The quantization part of validate_conv_common (also the transposed convolution's): offsets,
// activation range, and one multiplier and shift per output channel.
Error validate_conv_quant(const ConvQuantParams& quant, int32_t output_channels);

}  // namespace cortexm
