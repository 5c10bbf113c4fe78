#include "cortexm/kernels/quantized_depthwise_conv2d.h"

#include "conv_reference.h"

namespace cortexm {

// Output channel oc = ic * depth_multiplier + m reads input channel ic.
void quantized_depthwise_conv2d_reference(const DepthwiseConv2dParams& p, const int8_t* input,
                                          const int8_t* filter, const int32_t* bias,
                                          int8_t* output) {
  const ConvQuantParams& q = p.quant;
  reference::for_each_output_pixel(p.output, [&](int32_t n, int32_t oy, int32_t ox, int64_t out_pixel) {
    for (int32_t oc = 0; oc < p.output.c; ++oc) {
      const int32_t ic = oc / p.depth_multiplier;
      uint32_t acc = static_cast<uint32_t>(bias ? bias[oc] : 0);
      reference::for_each_window_tap(p.input, p.geometry, p.filter.h, p.filter.w, n, oy, ox,
                                     [&](int32_t kh, int32_t kw, int64_t in_pixel) {
        const int32_t x = input[in_pixel * p.input.c + ic] + q.input_offset;
        acc += static_cast<uint32_t>(x * filter[(int64_t{kh} * p.filter.w + kw) * p.filter.c + oc]);
      });
      output[out_pixel * p.output.c + oc] = reference::requantize_output(acc, q, oc);
    }
  });
}

}  // namespace cortexm
