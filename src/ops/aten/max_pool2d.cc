// aten.max_pool2d.default on float32 NCHW / CHW with dilation and ceil_mode; padding never wins
// (it is -inf) and a NaN in a window gives NaN, as in torch.
#include <algorithm>
#include <limits>

#include "ops/aten/pool2d_geometry.h"

namespace cortexm::ops {

namespace {

std::vector<TensorInfo> infer(const InferContext& ctx) {
  require_dtype(ctx, 0, {DType::kFloat32});
  const Pool2dGeometry g = pool2d_geometry(ctx, ctx.input(0), true);
  return {make_info(DType::kFloat32, pool2d_output_shape(ctx.input(0), g))};
}

void kernel(const KernelContext& ctx) {
  const Pool2dGeometry g = pool2d_geometry(ctx, ctx.input(0).info(), true);
  const float* x = ctx.input(0).data<float>();
  float* y = ctx.output().data<float>();
  for (int64_t p = 0; p < g.planes; ++p) {
    const float* plane = x + p * g.h * g.w;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      int64_t y0 = oy * g.sh - g.ph;
      const int64_t y1 = std::min(y0 + (g.kh - 1) * g.dh + 1, g.h);
      while (y0 < 0) y0 += g.dh;
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        int64_t x0 = ox * g.sw - g.pw;
        const int64_t x1 = std::min(x0 + (g.kw - 1) * g.dw + 1, g.w);
        while (x0 < 0) x0 += g.dw;
        float best = -std::numeric_limits<float>::infinity();
        for (int64_t iy = y0; iy < y1; iy += g.dh) {
          for (int64_t ix = x0; ix < x1; ix += g.dw) {
            const float v = plane[iy * g.w + ix];
            if (v > best || v != v) best = v;
          }
        }
        y[(p * g.oh + oy) * g.ow + ox] = best;
      }
    }
  }
}

}  // namespace

void register_aten_max_pool2d(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.max_pool2d.default";
  s.inputs = {{"self"}};
  s.attrs = {{"kernel_size", AttrKind::kInts},
             {"stride", AttrKind::kInts, false, AttrValue(std::vector<int64_t>{})},
             {"padding", AttrKind::kInts, false, AttrValue(std::vector<int64_t>{0})},
             {"dilation", AttrKind::kInts, false, AttrValue(std::vector<int64_t>{1})},
             {"ceil_mode", AttrKind::kBool, false, AttrValue(false)}};
  s.infer = infer;
  s.kernel = kernel;
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
