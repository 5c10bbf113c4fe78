#include "pool2d_geometry.h"

namespace cortexm::portable {

Error avg_pool2d_prepare(const AvgPool2dParams& p, Shape* output) {
  if (p.pool.dilation_h != 1) return invalid("dilation", p.pool.dilation_h, "must be 1", 0);
  if (p.pool.dilation_w != 1) return invalid("dilation", p.pool.dilation_w, "must be 1", 1);
  return check_pool2d(p.pool, output);
}

void avg_pool2d_f32(const AvgPool2dParams& params, const float* x, float* y) {
  const Pool2dParams& p = params.pool;
  const Pool2dGeometry g = pool2d_geometry(p);
  for (int64_t plane = 0; plane < g.planes; ++plane) {
    const float* in = x + plane * g.h * g.w;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        int64_t y0 = oy * p.stride_h - p.pad_h, x0 = ox * p.stride_w - p.pad_w;
        int64_t y1 = y0 + p.kernel_h, x1 = x0 + p.kernel_w;
        if (y1 > g.h + p.pad_h) y1 = g.h + p.pad_h;
        if (x1 > g.w + p.pad_w) x1 = g.w + p.pad_w;
        const int64_t padded_count = (y1 - y0) * (x1 - x0);
        if (y0 < 0) y0 = 0;
        if (x0 < 0) x0 = 0;
        if (y1 > g.h) y1 = g.h;
        if (x1 > g.w) x1 = g.w;
        float& out = *y++;
        if (y0 >= y1 || x0 >= x1) {
          out = 0.0f;
          continue;
        }
        double sum = 0.0;
        for (int64_t iy = y0; iy < y1; ++iy)
          for (int64_t ix = x0; ix < x1; ++ix) sum += in[iy * g.w + ix];
        const int64_t count = params.divisor_override != 0 ? params.divisor_override
                              : params.count_include_pad  ? padded_count
                                                          : (y1 - y0) * (x1 - x0);
        out = static_cast<float>(sum / static_cast<double>(count));
      }
    }
  }
}

}  // namespace cortexm::portable
