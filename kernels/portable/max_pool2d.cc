#include <math.h>

#include "pool2d_geometry.h"

namespace cortexm::portable {

Error max_pool2d_prepare(const Pool2dParams& p, Shape* output) { return check_pool2d(p, output); }

void max_pool2d_f32(const Pool2dParams& p, const float* x, float* y) {
  const Pool2dGeometry g = pool2d_geometry(p);
  const int64_t kh = p.kernel_h, kw = p.kernel_w, dh = p.dilation_h, dw = p.dilation_w;
  for (int64_t plane = 0; plane < g.planes; ++plane) {
    const float* in = x + plane * g.h * g.w;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      int64_t y0 = oy * p.stride_h - p.pad_h;
      const int64_t y_end = y0 + (kh - 1) * dh + 1;
      const int64_t y1 = y_end < g.h ? y_end : g.h;
      while (y0 < 0) y0 += dh;
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        int64_t x0 = ox * p.stride_w - p.pad_w;
        const int64_t x_end = x0 + (kw - 1) * dw + 1;
        const int64_t x1 = x_end < g.w ? x_end : g.w;
        while (x0 < 0) x0 += dw;
        float best = -INFINITY;
        for (int64_t iy = y0; iy < y1; iy += dh) {
          for (int64_t ix = x0; ix < x1; ix += dw) {
            const float v = in[iy * g.w + ix];
            if (v > best || v != v) best = v;
          }
        }
        *y++ = best;
      }
    }
  }
}

}  // namespace cortexm::portable
