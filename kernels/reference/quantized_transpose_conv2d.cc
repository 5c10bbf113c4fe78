#include "cortexm/kernels/quantized_transpose_conv2d.h"

#include "conv_reference.h"

namespace cortexm {

void quantized_transpose_conv2d_reference(const TransposeConv2dParams& p, const int8_t* input,
                                          const int8_t* filter, const int32_t* bias,
                                          int8_t* output) {
  const ConvQuantParams& q = p.quant;
  for (int32_t n = 0; n < p.output.n; ++n) {
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      for (int32_t ox = 0; ox < p.output.w; ++ox) {
        for (int32_t oc = 0; oc < p.output.c; ++oc) {
          uint32_t acc = static_cast<uint32_t>(bias ? bias[oc] : 0);  // modulo 2^32
          for (int32_t kh = 0; kh < p.filter.h; ++kh) {
            const int64_t fy = int64_t{oy} + p.padding.top - kh;
            if (fy < 0 || fy % p.stride_h != 0 || fy / p.stride_h >= p.input.h) continue;
            for (int32_t kw = 0; kw < p.filter.w; ++kw) {
              const int64_t fx = int64_t{ox} + p.padding.left - kw;
              if (fx < 0 || fx % p.stride_w != 0 || fx / p.stride_w >= p.input.w) continue;
              const int64_t pixel =
                  (int64_t{n} * p.input.h + fy / p.stride_h) * p.input.w + fx / p.stride_w;
              for (int32_t ic = 0; ic < p.input.c; ++ic) {
                const int32_t x = input[pixel * p.input.c + ic] + q.input_offset;
                const int32_t w =
                    filter[((int64_t{oc} * p.filter.h + kh) * p.filter.w + kw) * p.filter.c + ic];
                acc += static_cast<uint32_t>(x * w);
              }
            }
          }
          output[((int64_t{n} * p.output.h + oy) * p.output.w + ox) * p.output.c + oc] =
              reference::requantize_output(acc, q, oc);
        }
      }
    }
  }
}

}  // namespace cortexm
