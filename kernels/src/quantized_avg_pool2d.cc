#include "cortexm/kernels/quantized_avg_pool2d.h"

#include "avg_pool.h"
#include "cortexm/kernels/requantize.h"
#include "variants.h"

namespace cortexm {

namespace {

// sum / count rounded halves away from zero (arm_avgpool_s8), then clamped, for one channel row.
template <typename Sum>
void average_and_clamp(const Sum* __restrict sums, int8_t* __restrict out, int32_t channels,
                       int32_t count, const UnsignedDivider& divider, int32_t act_min,
                       int32_t act_max) {
  const uint32_t half = static_cast<uint32_t>(count / 2);
  for (int32_t c = 0; c < channels; ++c) {
    const int32_t sum = sums[c];
    const uint32_t magnitude = static_cast<uint32_t>(sum > 0 ? sum : -sum) + half;
    const int32_t quotient = static_cast<int32_t>(divider.divide(magnitude));
    const int32_t average = sum > 0 ? quotient : -quotient;
    out[c] = static_cast<int8_t>(clamp(average, act_min, act_max));
  }
}

// Sum is int16 when every window holds at most 256 taps (sum in [-2^15, 2^15)), else int32:
// narrower lanes double the channels summed per vector instruction.
template <typename Sum>
void average_pool(const Pool2dParams& p, const int8_t* input, int8_t* output,
                  Sum* __restrict sums) {
  const int32_t channels = p.input.c;
  const int64_t pixel_stride = channels;
  const int64_t row_stride = int64_t{p.input.w} * channels;
  const int64_t image_stride = int64_t{p.input.h} * row_stride;
  int32_t divider_count = 1;  // windows mostly share a tap count: reuse its divider
  UnsignedDivider divider(divider_count);
  for (int32_t n = 0; n < p.output.n; ++n) {
    const int8_t* image = input + n * image_stride;
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      const PoolTaps ty = pool_window_taps(oy, p.stride_h, p.padding.top, p.kernel_h, p.input.h);
      const int64_t y0 = int64_t{oy} * p.stride_h - p.padding.top;
      for (int32_t ox = 0; ox < p.output.w; ++ox) {
        const PoolTaps tx =
            pool_window_taps(ox, p.stride_w, p.padding.left, p.kernel_w, p.input.w);
        const int64_t x0 = int64_t{ox} * p.stride_w - p.padding.left;
        bool first = true;
        for (int32_t ky = ty.begin; ky < ty.end; ++ky) {
          const int8_t* __restrict row =
              image + (y0 + ky) * row_stride + (x0 + tx.begin) * pixel_stride;
          for (int32_t kx = tx.begin; kx < tx.end; ++kx, row += pixel_stride) {
            if (first) {
              for (int32_t c = 0; c < channels; ++c) sums[c] = row[c];
              first = false;
            } else {
              for (int32_t c = 0; c < channels; ++c) sums[c] = static_cast<Sum>(sums[c] + row[c]);
            }
          }
        }
        const int32_t count = (ty.end - ty.begin) * (tx.end - tx.begin);
        if (count != divider_count) {
          divider = UnsignedDivider(count);
          divider_count = count;
        }
        average_and_clamp(sums, output, channels, count, divider, p.activation_min,
                          p.activation_max);
        output += channels;
      }
    }
  }
}

}  // namespace

Error quantized_avg_pool2d_prepare(const Pool2dParams& params) {
  CORTEXM_RETURN_IF_ERROR(validate_pool2d(params));
  const int64_t taps = avg_pool_max_window_taps(params);
  if (taps > kMaxAvgPoolWindowTaps)
    return invalid("kernel_size", taps, "covers more than 2^23 input pixels");
  return kOk;
}

// One int32 sum per channel, 4-byte aligned, for every isa: the scalar kernel's (windows of at most
// 256 taps use int16 sums, half of it; the size depends on the channels alone because the lowering
// asks for it before it knows the window). The MVE variant keeps its sums in registers and uses
// none, but the host runs the scalar kernel on programs planned for any isa.
size_t quantized_avg_pool2d_scratch_size(const Pool2dParams& params, Isa /*isa*/) {
  return static_cast<size_t>(params.input.c) * sizeof(int32_t);
}

void quantized_avg_pool2d(const Pool2dParams& params, const int8_t* input, int8_t* output,
                          void* scratch) {
#if CORTEXM_BUILT_ISA == 2
  mve::quantized_avg_pool2d(params, input, output, scratch);
#else
#if CORTEXM_BUILT_ISA == 1
  if (avg_pool_max_window_taps(params) <= 256) {  // int16 lanes: the DSP variant
    dsp::quantized_avg_pool2d(params, input, output, scratch);
    return;
  }
#endif
  if (avg_pool_max_window_taps(params) <= 256)
    average_pool(params, input, output, static_cast<int16_t*>(scratch));
  else
    average_pool(params, input, output, static_cast<int32_t*>(scratch));
#endif
}

}  // namespace cortexm
