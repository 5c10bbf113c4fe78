#include "cortexm/kernels/quantized_depthwise_conv2d.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

void quantized_depthwise_conv2d_reference(const DepthwiseConv2dParams& p, const int8_t* input,
                                          const int8_t* filter, const int32_t* bias,
                                          int8_t* output) {
  const ConvGeometry& g = p.geometry;
  const ConvQuantParams& q = p.quant;
  for (int32_t n = 0; n < p.output.n; ++n) {
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      for (int32_t ox = 0; ox < p.output.w; ++ox) {
        for (int32_t ic = 0; ic < p.input.c; ++ic) {
          for (int32_t m = 0; m < p.depth_multiplier; ++m) {
            const int32_t oc = ic * p.depth_multiplier + m;
            // Accumulates modulo 2^32, as the target's 32-bit adds do.
            uint32_t acc = static_cast<uint32_t>(bias ? bias[oc] : 0);
            for (int32_t kh = 0; kh < p.filter.h; ++kh) {
              const int64_t iy =
                  int64_t{oy} * g.stride_h - g.padding.top + int64_t{kh} * g.dilation_h;
              if (iy < 0 || iy >= p.input.h) continue;
              for (int32_t kw = 0; kw < p.filter.w; ++kw) {
                const int64_t ix =
                    int64_t{ox} * g.stride_w - g.padding.left + int64_t{kw} * g.dilation_w;
                if (ix < 0 || ix >= p.input.w) continue;
                const int64_t in_index =
                    ((int64_t{n} * p.input.h + iy) * p.input.w + ix) * p.input.c + ic;
                const int64_t filter_index = (int64_t{kh} * p.filter.w + kw) * p.filter.c + oc;
                const int32_t x = input[in_index] + q.input_offset;
                acc += static_cast<uint32_t>(x * filter[filter_index]);
              }
            }
            const int32_t scaled =
                requantize(static_cast<int32_t>(acc), q.multipliers[oc], q.shifts[oc]);
            int32_t out = static_cast<int32_t>(static_cast<uint32_t>(scaled) +
                                               static_cast<uint32_t>(q.output_offset));
            out = out < q.activation_min ? q.activation_min : out;
            out = out > q.activation_max ? q.activation_max : out;
            const int64_t out_index =
                ((int64_t{n} * p.output.h + oy) * p.output.w + ox) * p.output.c + oc;
            output[out_index] = static_cast<int8_t>(out);
          }
        }
      }
    }
  }
}

}  // namespace cortexm
