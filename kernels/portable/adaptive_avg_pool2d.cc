#include "cortexm/portable/pool2d.h"

namespace cortexm::portable {

Error adaptive_avg_pool2d_prepare(const AdaptiveAvgPool2dParams& p, Shape* output) {
  CORTEXM_RETURN_IF_ERROR(check_shape(p.input, "self"));
  const int r = p.input.rank;
  if (r != 3 && r != 4) return invalid("self.rank", r, "must be 3 (CHW) or 4 (NCHW)");
  for (int d = r - 3; d < r; ++d)
    if (p.input.dims[d] < 1) return invalid("self.shape", p.input.dims[d], "must be >= 1", d);
  if (p.out_h < 1 || p.out_h > (int64_t{1} << 24)) return invalid("output_size", p.out_h, "must be in [1, 2^24]", 0);
  if (p.out_w < 1 || p.out_w > (int64_t{1} << 24)) return invalid("output_size", p.out_w, "must be in [1, 2^24]", 1);
  Shape out = p.input;
  out.dims[r - 2] = p.out_h;
  out.dims[r - 1] = p.out_w;
  CORTEXM_RETURN_IF_ERROR(check_shape(out, "output"));
  if (output) *output = out;
  return kOk;
}

void adaptive_avg_pool2d_f32(const AdaptiveAvgPool2dParams& p, const float* x, float* y) {
  const int r = p.input.rank;
  const int64_t h = p.input.dims[r - 2], w = p.input.dims[r - 1];
  const int64_t planes = p.input.numel() / (h * w);
  const int64_t oh = p.out_h, ow = p.out_w;
  for (int64_t plane = 0; plane < planes; ++plane) {
    const float* in = x + plane * h * w;
    for (int64_t oy = 0; oy < oh; ++oy) {
      const int64_t y0 = oy * h / oh, y1 = ((oy + 1) * h + oh - 1) / oh;
      for (int64_t ox = 0; ox < ow; ++ox) {
        const int64_t x0 = ox * w / ow, x1 = ((ox + 1) * w + ow - 1) / ow;
        double sum = 0.0;
        for (int64_t iy = y0; iy < y1; ++iy)
          for (int64_t ix = x0; ix < x1; ++ix) sum += in[iy * w + ix];
        *y++ = static_cast<float>(sum / static_cast<double>((y1 - y0) * (x1 - x0)));
      }
    }
  }
}

}  // namespace cortexm::portable
