// Upsample bilinear 2d (aten.upsample_bilinear2d) on contiguous NCHW. float32: torch's CPU
// arithmetic in float32 (the source coordinate, the clamp to the edge, the weights and their
// order). int8 / int16: TFLite Micro's RESIZE_BILINEAR (reference_ops::ResizeBilinearInteger): 10
// fractional bits, half_pixel_centers = !align_corners, the output at the input's qparams.
#pragma once

#include <cstdint>

#include "cortexm/portable/shape.h"

namespace cortexm::portable {

struct UpsampleBilinear2dParams {
  Shape input;  // [N, C, H, W], H and W >= 1
  int64_t out_h = 1;
  int64_t out_w = 1;
  bool align_corners = false;
  // float32 only: the source step per output pixel (upsample_bilinear2d_step); the integer kernels
  // take TFLite's 10-bit steps from the sizes.
  float step_h = 1.0f;
  float step_w = 1.0f;
};

// torch's area_pixel_compute_scale in float32: (in - 1) / (out - 1) with align_corners (0 for one
// output pixel), else float32(1 / scale) for a positive scale, else in / out.
float upsample_bilinear2d_step(int64_t in, int64_t out, bool align_corners, double scale);

// integer: the int8 / int16 kernels' limits (TFLite's int32 coordinates), sizes at most 2^20.
Error upsample_bilinear2d_prepare(const UpsampleBilinear2dParams& params, bool integer,
                                  Shape* output = nullptr);

void upsample_bilinear2d_f32(const UpsampleBilinear2dParams& params, const float* input, float* output);
void upsample_bilinear2d_s8(const UpsampleBilinear2dParams& params, const int8_t* input, int8_t* output);
void upsample_bilinear2d_s16(const UpsampleBilinear2dParams& params, const int16_t* input, int16_t* output);

}  // namespace cortexm::portable
