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
