#include "cortexm/kernels/quantized_conv2d_s16.h"

#include "conv_reference.h"
#include "cortexm/kernels/quantized_conv2d_s16w16.h"

namespace cortexm {

namespace {

// Both filter types: int8 (16x8) and int16 (16x16).
template <class W>
void reference_conv_s16(const Conv2dS16Params& p, const int16_t* input, const W* filter,
                        const int64_t* bias, int16_t* output) {
  const int32_t out_per_group = p.filter.n / p.groups();
  reference::for_each_output_pixel(p.output, [&](int32_t n, int32_t oy, int32_t ox, int64_t out_pixel) {
    for (int32_t oc = 0; oc < p.output.c; ++oc) {
      const int32_t first_channel = oc / out_per_group * p.filter.c;
      int64_t sum = 0;
      reference::for_each_window_tap(p.input, p.geometry, p.filter.h, p.filter.w, n, oy, ox,
                                     [&](int32_t kh, int32_t kw, int64_t in_pixel) {
        for (int32_t ic = 0; ic < p.filter.c; ++ic) {
          const int64_t filter_index =
              ((int64_t{oc} * p.filter.h + kh) * p.filter.w + kw) * p.filter.c + ic;
          sum += int64_t{input[in_pixel * p.input.c + first_channel + ic]} * filter[filter_index];
        }
      });
      // The bias is added modulo 2^64, as the target's 64-bit add does.
      const int64_t acc = static_cast<int64_t>(static_cast<uint64_t>(sum) +
                                               static_cast<uint64_t>(bias ? bias[oc] : 0));
      const int32_t out = requantize_s64(acc, reduce_multiplier(p.multipliers[oc]), p.shifts[oc]);
      output[out_pixel * p.output.c + oc] =
          static_cast<int16_t>(clamp(out, p.activation_min, p.activation_max));
    }
  });
}

}  // namespace

void quantized_conv2d_s16_reference(const Conv2dS16Params& p, const int16_t* input,
                                    const int8_t* filter, const int64_t* bias, int16_t* output) {
  reference_conv_s16(p, input, filter, bias, output);
}

void quantized_conv2d_s16w16_reference(const Conv2dS16W16Params& p, const int16_t* input,
                                       const int16_t* filter, const int64_t* bias, int16_t* output) {
  reference_conv_s16(p, input, filter, bias, output);
}

}  // namespace cortexm
