#include "cortexm/kernels/quantized_max_pool2d.h"

#include "conv_reference.h"

namespace cortexm {

namespace {

template <class T>
void max_pool2d_reference(const Pool2dParams& p, const T* input, T* output) {
  const ConvGeometry g = reference::pool_geometry(p.stride_h, p.stride_w, p.padding);
  reference::for_each_output_pixel(p.output, [&](int32_t n, int32_t oy, int32_t ox, int64_t out_pixel) {
    for (int32_t c = 0; c < p.output.c; ++c) {
      int32_t maximum = INT32_MIN;  // below every T: the first valid tap replaces it
      reference::for_each_window_tap(p.input, g, p.kernel_h, p.kernel_w, n, oy, ox,
                                     [&](int32_t, int32_t, int64_t in_pixel) {
        const int32_t v = input[in_pixel * p.input.c + c];
        maximum = v > maximum ? v : maximum;
      });
      output[out_pixel * p.output.c + c] =
          static_cast<T>(clamp(maximum, p.activation_min, p.activation_max));
    }
  });
}

}  // namespace

void quantized_max_pool2d_reference(const Pool2dParams& p, const int8_t* input, int8_t* output) {
  max_pool2d_reference(p, input, output);
}

void quantized_max_pool2d_s16_reference(const Pool2dParams& p, const int16_t* input,
                                        int16_t* output) {
  max_pool2d_reference(p, input, output);
}

}  // namespace cortexm
