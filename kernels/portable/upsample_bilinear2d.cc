#include "cortexm/portable/upsample_bilinear2d.h"

#include <math.h>

namespace cortexm::portable {

namespace {

constexpr int64_t kMaxFloatSize = int64_t{1} << 24;
constexpr int64_t kMaxIntegerSize = int64_t{1} << 20;  // TFLite's coordinates stay in int32

// torch's compute_source_index_and_lambda in float32: the two source pixels and their weights.
struct Tap {
  int64_t i0, i1;
  float w0, w1;
};

Tap float_tap(int64_t dst, int64_t in, int64_t out, float step, bool align_corners) {
  if (in == out) return {dst, dst, 1.0f, 0.0f};
  float src = align_corners ? step * static_cast<float>(dst)
                            : step * (static_cast<float>(dst) + 0.5f) - 0.5f;
  if (src < 0.0f) src = 0.0f;
  int64_t i0 = static_cast<int64_t>(floorf(src));
  if (i0 > in - 1) i0 = in - 1;
  float lambda = src - static_cast<float>(i0);
  lambda = lambda < 0.0f ? 0.0f : (lambda > 1.0f ? 1.0f : lambda);
  return {i0, i0 < in - 1 ? i0 + 1 : i0, 1.0f - lambda, lambda};
}

// TFLite's 10-bit step: round(1024 * in / out), (in - 1) / (out - 1) with align_corners.
int32_t step_10(int64_t in, int64_t out, bool align_corners) {
  if (align_corners && out > 1)
    return static_cast<int32_t>((1024 * (in - 1) + (out - 1) / 2) / (out - 1));
  return static_cast<int32_t>((1024 * in + out / 2) / out);
}

// TFLite's ComputeInterpolationValuesInteger: the source coordinate with 10 fractional bits and
// the two source pixels (C's truncating division, as TFLite).
struct IntegerTap {
  int32_t scaled, i0, i1;
};

IntegerTap integer_tap(int32_t dst, int32_t step, bool half_pixel_centers, int32_t in) {
  const int32_t scaled = half_pixel_centers ? dst * step + step / 2 - (1 << 9) : dst * step;
  const int32_t lower = scaled / (1 << 10);
  const int32_t upper = (scaled + (1 << 10) - 1) / (1 << 10);
  return {scaled, lower > 0 ? lower : 0, upper < in - 1 ? upper : in - 1};
}

template <typename T>
void upsample_integer(const UpsampleBilinear2dParams& p, const T* in, T* out) {
  const int64_t planes = p.input.dims[0] * p.input.dims[1];
  const int32_t h = static_cast<int32_t>(p.input.dims[2]), w = static_cast<int32_t>(p.input.dims[3]);
  const int32_t oh = static_cast<int32_t>(p.out_h), ow = static_cast<int32_t>(p.out_w);
  const int32_t step_h = step_10(h, oh, p.align_corners), step_w = step_10(w, ow, p.align_corners);
  const bool half_pixel = !p.align_corners;
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T* src = in + plane * h * w;
    for (int32_t y = 0; y < oh; ++y) {
      const IntegerTap ty = integer_tap(y, step_h, half_pixel, h);
      const int64_t dy = ty.scaled - (1 << 10) * ty.i0;
      for (int32_t x = 0; x < ow; ++x) {
        const IntegerTap tx = integer_tap(x, step_w, half_pixel, w);
        const int64_t dx = tx.scaled - (1 << 10) * tx.i0;
        const int64_t sum = src[ty.i0 * w + tx.i0] * ((1 << 10) - dy) * ((1 << 10) - dx) +
                            src[ty.i1 * w + tx.i0] * dy * ((1 << 10) - dx) +
                            src[ty.i0 * w + tx.i1] * ((1 << 10) - dy) * dx +
                            src[ty.i1 * w + tx.i1] * dy * dx;
        const int64_t round = sum > 0 ? (1 << 19) : -(1 << 19);
        *out++ = static_cast<T>((sum + round) / (1 << 20));
      }
    }
  }
}

}  // namespace

float upsample_bilinear2d_step(int64_t in, int64_t out, bool align_corners, double scale) {
  if (align_corners)
    return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
  if (scale > 0.0) return static_cast<float>(1.0 / scale);
  return static_cast<float>(in) / static_cast<float>(out);
}

Error upsample_bilinear2d_prepare(const UpsampleBilinear2dParams& p, bool integer, Shape* output) {
  CORTEXM_RETURN_IF_ERROR(check_shape(p.input, "self"));
  if (p.input.rank != 4) return invalid("self.rank", p.input.rank, "must be 4 (NCHW)");
  const int64_t limit = integer ? kMaxIntegerSize : kMaxFloatSize;
  for (int32_t d = 2; d < 4; ++d)
    if (p.input.dims[d] < 1 || p.input.dims[d] > limit)
      return invalid("self.shape", p.input.dims[d], integer ? "must be in [1, 2^20]" : "must be in [1, 2^24]", d);
  if (p.out_h < 1 || p.out_h > limit)
    return invalid("output_size", p.out_h, integer ? "must be in [1, 2^20]" : "must be in [1, 2^24]", 0);
  if (p.out_w < 1 || p.out_w > limit)
    return invalid("output_size", p.out_w, integer ? "must be in [1, 2^20]" : "must be in [1, 2^24]", 1);
  if (integer) {
    // A 10-bit step rounded down too far puts the last row's lower pixel past the input (TFLite
    // would read outside it): such a ratio has no integer kernel.
    const int64_t sizes[2][2] = {{p.input.dims[2], p.out_h}, {p.input.dims[3], p.out_w}};
    for (int32_t d = 0; d < 2; ++d) {
      const int32_t in = static_cast<int32_t>(sizes[d][0]), out = static_cast<int32_t>(sizes[d][1]);
      const IntegerTap last = integer_tap(out - 1, step_10(in, out, p.align_corners), !p.align_corners, in);
      if (last.i0 > in - 1)
        return invalid("output_size", sizes[d][1], "upsamples too far for 10-bit source coordinates", d);
    }
  } else {
    const float steps[2] = {p.step_h, p.step_w};
    for (int32_t d = 0; d < 2; ++d)
      if (!(steps[d] >= 0.0f && steps[d] <= static_cast<float>(kMaxFloatSize)))
        return invalid(d == 0 ? "step_h" : "step_w", static_cast<int64_t>(steps[d]), "must be in [0, 2^24]");
  }
  return resized_output(p.input, p.out_h, p.out_w, output);
}

void upsample_bilinear2d_f32(const UpsampleBilinear2dParams& p, const float* input, float* output) {
  const int64_t planes = p.input.dims[0] * p.input.dims[1];
  const int64_t h = p.input.dims[2], w = p.input.dims[3];
  for (int64_t plane = 0; plane < planes; ++plane) {
    const float* src = input + plane * h * w;
    for (int64_t y = 0; y < p.out_h; ++y) {
      const Tap ty = float_tap(y, h, p.out_h, p.step_h, p.align_corners);
      const float* row0 = src + ty.i0 * w;
      const float* row1 = src + ty.i1 * w;
      for (int64_t x = 0; x < p.out_w; ++x) {
        const Tap tx = float_tap(x, w, p.out_w, p.step_w, p.align_corners);
        // torch's order: each row along W, then the two rows along H.
        const float top = row0[tx.i0] * tx.w0 + row0[tx.i1] * tx.w1;
        const float bottom = row1[tx.i0] * tx.w0 + row1[tx.i1] * tx.w1;
        *output++ = top * ty.w0 + bottom * ty.w1;
      }
    }
  }
}

void upsample_bilinear2d_s8(const UpsampleBilinear2dParams& p, const int8_t* input, int8_t* output) {
  upsample_integer(p, input, output);
}

void upsample_bilinear2d_s16(const UpsampleBilinear2dParams& p, const int16_t* input, int16_t* output) {
  upsample_integer(p, input, output);
}

}  // namespace cortexm::portable
