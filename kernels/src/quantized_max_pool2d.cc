#include "cortexm/kernels/quantized_max_pool2d.h"

namespace cortexm {

namespace {

// The first valid tap seeds the output row; later taps fold in with a per-channel max.
template <class T>
void max_pool2d_nhwc(const Pool2dParams& p, const T* input, T* output) {
  const int32_t channels = p.input.c;
  const int64_t pixel_stride = channels;
  const int64_t row_stride = int64_t{p.input.w} * channels;
  const int64_t image_stride = int64_t{p.input.h} * row_stride;
  const T act_min = static_cast<T>(p.activation_min);
  const T act_max = static_cast<T>(p.activation_max);
  for (int32_t n = 0; n < p.output.n; ++n) {
    const T* image = input + n * image_stride;
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      const PoolTaps ty = pool_window_taps(oy, p.stride_h, p.padding.top, p.kernel_h, p.input.h);
      const int64_t y0 = int64_t{oy} * p.stride_h - p.padding.top;
      for (int32_t ox = 0; ox < p.output.w; ++ox) {
        const PoolTaps tx =
            pool_window_taps(ox, p.stride_w, p.padding.left, p.kernel_w, p.input.w);
        const int64_t x0 = int64_t{ox} * p.stride_w - p.padding.left;
        T* __restrict out = output;
        output += channels;
        bool first = true;
        for (int32_t ky = ty.begin; ky < ty.end; ++ky) {
          const T* row = image + (y0 + ky) * row_stride + (x0 + tx.begin) * pixel_stride;
          for (int32_t kx = tx.begin; kx < tx.end; ++kx, row += pixel_stride) {
            const T* __restrict tap = row;
            if (first) {
              for (int32_t c = 0; c < channels; ++c) out[c] = tap[c];
              first = false;
            } else {
              for (int32_t c = 0; c < channels; ++c) out[c] = tap[c] > out[c] ? tap[c] : out[c];
            }
          }
        }
        for (int32_t c = 0; c < channels; ++c) {
          const T v = out[c] < act_min ? act_min : out[c];
          out[c] = v > act_max ? act_max : v;
        }
      }
    }
  }
}

}  // namespace

CORTEXM_PREPARE_STEP Error quantized_max_pool2d_prepare(const Pool2dParams& params) { return validate_pool2d(params); }

CORTEXM_PREPARE_STEP Error quantized_max_pool2d_s16_prepare(const Pool2dParams& params) {
  return validate_pool2d(params, /*int16=*/true);
}

void quantized_max_pool2d(const Pool2dParams& p, const int8_t* input, int8_t* output) {
  max_pool2d_nhwc(p, input, output);
}

void quantized_max_pool2d_s16(const Pool2dParams& p, const int16_t* input, int16_t* output) {
  max_pool2d_nhwc(p, input, output);
}

}  // namespace cortexm
