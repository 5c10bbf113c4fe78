#include "cortexm/kernels/conv_params.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

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

Dims4 conv_output_dims(const Dims4& input, int32_t kernel_h, int32_t kernel_w,
                       const ConvGeometry& g, int32_t output_channels) {
  Dims4 out;
  out.n = input.n;
  out.h = window_output_size(input.h, kernel_h, g.stride_h, g.dilation_h, g.padding.top,
                             g.padding.bottom);
  out.w = window_output_size(input.w, kernel_w, g.stride_w, g.dilation_w, g.padding.left,
                             g.padding.right);
  out.c = output_channels;
  return out;
}

Error validate_conv_common(const ConvQuantParams& quant, const ConvGeometry& g, const Dims4& input,
                           int32_t kernel_h, int32_t kernel_w, const Dims4& output,
                           int32_t output_channels) {
  if (input.n < 1) return invalid("input.shape[0]", input.n, "must be >= 1");
  if (input.h < 1) return invalid("input.shape[1]", input.h, "must be >= 1");
  if (input.w < 1) return invalid("input.shape[2]", input.w, "must be >= 1");
  if (input.c < 1) return invalid("input.shape[3]", input.c, "must be >= 1");
  if (kernel_h < 1) return invalid("weight.shape[1]", kernel_h, "must be >= 1");
  if (kernel_w < 1) return invalid("weight.shape[2]", kernel_w, "must be >= 1");
  CORTEXM_RETURN_IF_ERROR(check_conv_window(g));
  const int32_t oh = window_output_size(input.h, kernel_h, g.stride_h, g.dilation_h,
                                        g.padding.top, g.padding.bottom);
  const int32_t ow = window_output_size(input.w, kernel_w, g.stride_w, g.dilation_w,
                                        g.padding.left, g.padding.right);
  if (oh < 1) return invalid("input.shape[1]", input.h, "is smaller than the dilated kernel");
  if (ow < 1) return invalid("input.shape[2]", input.w, "is smaller than the dilated kernel");
  if (output.n != input.n) return invalid("output.shape[0]", output.n, "must equal the batch");
  if (output.h != oh) return invalid("output.shape[1]", output.h, "must equal the computed height");
  if (output.w != ow) return invalid("output.shape[2]", output.w, "must equal the computed width");
  if (output.c != output_channels)
    return invalid("output.shape[3]", output.c, "must equal the output channels");
  return validate_conv_quant(quant, output_channels);
}

Error validate_grouped_conv(const ConvQuantParams& quant, const ConvGeometry& geometry,
                            const Dims4& input, const Dims4& filter, const Dims4& output) {
  if (filter.n < 1) return invalid("weight.shape[0]", filter.n, "must be >= 1");
  if (filter.c < 1) return invalid("weight.shape[3]", filter.c, "must be >= 1");
  CORTEXM_RETURN_IF_ERROR(check_padded_extent(input, geometry.padding));
  CORTEXM_RETURN_IF_ERROR(validate_conv_common(quant, geometry, input, filter.h, filter.w, output,
                                               filter.n));
  if (input.c % filter.c != 0)
    return invalid("weight.shape[3]", filter.c, "must divide input.shape[3]");
  if (filter.n % (input.c / filter.c) != 0)
    return invalid("weight.shape[0]", filter.n,
                   "must be a multiple of groups = input.shape[3] / weight.shape[3]");
  return kOk;
}

Error validate_conv_quant(const ConvQuantParams& quant, int32_t output_channels) {
  CORTEXM_RETURN_IF_ERROR(check_input_offset("input_offset", quant.input_offset));
  CORTEXM_RETURN_IF_ERROR(check_output_offset("output_offset", quant.output_offset));
  CORTEXM_RETURN_IF_ERROR(check_activation_range(quant.activation_min, quant.activation_max));
  return check_multipliers(quant.multipliers, quant.shifts, output_channels,
                           "must be given per output channel");
}

}  // namespace cortexm
