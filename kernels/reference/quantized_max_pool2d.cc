#include "cortexm/kernels/quantized_max_pool2d.h"

namespace cortexm {

void quantized_max_pool2d_reference(const Pool2dParams& p, const int8_t* input,
                                    int8_t* output) {
  const Dims4& in = p.input;
  for (int32_t n = 0; n < p.output.n; ++n) {
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      for (int32_t ox = 0; ox < p.output.w; ++ox) {
        for (int32_t c = 0; c < p.output.c; ++c) {
          int32_t maximum = -129;
          for (int32_t ky = 0; ky < p.kernel_h; ++ky) {
            const int64_t iy = int64_t{oy} * p.stride_h - p.padding.top + ky;
            if (iy < 0 || iy >= in.h) continue;
            for (int32_t kx = 0; kx < p.kernel_w; ++kx) {
              const int64_t ix = int64_t{ox} * p.stride_w - p.padding.left + kx;
              if (ix < 0 || ix >= in.w) continue;
              const int32_t v = input[((int64_t{n} * in.h + iy) * in.w + ix) * in.c + c];
              maximum = v > maximum ? v : maximum;
            }
          }
          maximum = maximum < p.activation_min ? p.activation_min : maximum;
          maximum = maximum > p.activation_max ? p.activation_max : maximum;
          output[((int64_t{n} * p.output.h + oy) * p.output.w + ox) * p.output.c + c] =
              static_cast<int8_t>(maximum);
        }
      }
    }
  }
}

}  // namespace cortexm
