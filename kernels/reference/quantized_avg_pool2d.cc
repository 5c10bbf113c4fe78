#include "cortexm/kernels/quantized_avg_pool2d.h"

#include "conv_reference.h"

namespace cortexm {

// The average of the taps inside the input, rounded half away from zero.
void quantized_avg_pool2d_reference(const Pool2dParams& p, const int8_t* input,
                                    int8_t* output) {
  const ConvGeometry g = reference::pool_geometry(p.stride_h, p.stride_w, p.padding);
  reference::for_each_output_pixel(p.output, [&](int32_t n, int32_t oy, int32_t ox, int64_t out_pixel) {
    for (int32_t c = 0; c < p.output.c; ++c) {
      int32_t sum = 0, count = 0;
      reference::for_each_window_tap(p.input, g, p.kernel_h, p.kernel_w, n, oy, ox,
                                     [&](int32_t, int32_t, int64_t in_pixel) {
        sum += input[in_pixel * p.input.c + c];
        ++count;
      });
      const int32_t average = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
      output[out_pixel * p.output.c + c] =
          static_cast<int8_t>(clamp(average, p.activation_min, p.activation_max));
    }
  });
}

}  // namespace cortexm
