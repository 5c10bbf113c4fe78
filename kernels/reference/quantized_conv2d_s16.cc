#include "cortexm/kernels/quantized_conv2d_s16.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

void quantized_conv2d_s16_reference(const Conv2dS16Params& p, const int16_t* input,
                                    const int8_t* filter, const int64_t* bias, int16_t* output) {
  const ConvGeometry& g = p.geometry;
  const int32_t out_per_group = p.filter.n / p.groups();
  for (int32_t n = 0; n < p.output.n; ++n) {
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      for (int32_t ox = 0; ox < p.output.w; ++ox) {
        for (int32_t oc = 0; oc < p.output.c; ++oc) {
          const int32_t first_channel = oc / out_per_group * p.filter.c;
          int64_t sum = 0;
          for (int32_t kh = 0; kh < p.filter.h; ++kh) {
            const int64_t iy =
                int64_t{oy} * g.stride_h - g.padding.top + int64_t{kh} * g.dilation_h;
            if (iy < 0 || iy >= p.input.h) continue;
            for (int32_t kw = 0; kw < p.filter.w; ++kw) {
              const int64_t ix =
                  int64_t{ox} * g.stride_w - g.padding.left + int64_t{kw} * g.dilation_w;
              if (ix < 0 || ix >= p.input.w) continue;
              for (int32_t ic = 0; ic < p.filter.c; ++ic) {
                const int64_t pixel = (int64_t{n} * p.input.h + iy) * p.input.w + ix;
                const int64_t in_index = pixel * p.input.c + first_channel + ic;
                const int64_t filter_index =
                    ((int64_t{oc} * p.filter.h + kh) * p.filter.w + kw) * p.filter.c + ic;
                sum += int64_t{input[in_index]} * filter[filter_index];
              }
            }
          }
          // The bias is added modulo 2^64, as the target's 64-bit add does.
          const int64_t acc = static_cast<int64_t>(static_cast<uint64_t>(sum) +
                                                   static_cast<uint64_t>(bias ? bias[oc] : 0));
          int32_t out = requantize_s64(acc, reduce_multiplier(p.multipliers[oc]), p.shifts[oc]);
          out = out < p.activation_min ? p.activation_min : out;
          out = out > p.activation_max ? p.activation_max : out;
          const int64_t out_index =
              ((int64_t{n} * p.output.h + oy) * p.output.w + ox) * p.output.c + oc;
          output[out_index] = static_cast<int16_t>(out);
        }
      }
    }
  }
}

}  // namespace cortexm
