// aten.avg_pool2d.default on float32 NCHW / CHW: torch's windows and divisors (count_include_pad
// counts padding inside the padded input, not past it; divisor_override replaces the count).
#include <algorithm>

#include "ops/aten/pool2d_geometry.h"

namespace cortexm::ops {

namespace {

std::vector<TensorInfo> infer(const InferContext& ctx) {
  require_dtype(ctx, 0, {DType::kFloat32});
  const Pool2dGeometry g = pool2d_geometry(ctx, ctx.input(0), false);
  if (!ctx.is_none("divisor_override") && ctx.i("divisor_override") == 0)
    ctx.fail("attribute 'divisor_override' must not be 0");
  return {make_info(DType::kFloat32, pool2d_output_shape(ctx.input(0), g))};
}

void kernel(const KernelContext& ctx) {
  const Pool2dGeometry g = pool2d_geometry(ctx, ctx.input(0).info(), false);
  const bool include_pad = ctx.b("count_include_pad");
  const int64_t divisor = ctx.is_none("divisor_override") ? 0 : ctx.i("divisor_override");
  const float* x = ctx.input(0).data<float>();
  float* y = ctx.output().data<float>();
  for (int64_t p = 0; p < g.planes; ++p) {
    const float* plane = x + p * g.h * g.w;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        int64_t y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw;
        int64_t y1 = std::min(y0 + g.kh, g.h + g.ph), x1 = std::min(x0 + g.kw, g.w + g.pw);
        const int64_t padded_count = (y1 - y0) * (x1 - x0);
        y0 = std::max<int64_t>(y0, 0);
        x0 = std::max<int64_t>(x0, 0);
        y1 = std::min(y1, g.h);
        x1 = std::min(x1, g.w);
        float& out = y[(p * g.oh + oy) * g.ow + ox];
        if (y0 >= y1 || x0 >= x1) {
          out = 0.0f;
          continue;
        }
        double sum = 0.0;
        for (int64_t iy = y0; iy < y1; ++iy)
          for (int64_t ix = x0; ix < x1; ++ix) sum += plane[iy * g.w + ix];
        const int64_t count =
            divisor != 0 ? divisor : (include_pad ? padded_count : (y1 - y0) * (x1 - x0));
        out = static_cast<float>(sum / static_cast<double>(count));
      }
    }
  }
}

}  // namespace

void register_aten_avg_pool2d(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.avg_pool2d.default";
  s.inputs = {{"self"}};
  s.attrs = {{"kernel_size", AttrKind::kInts},
             {"stride", AttrKind::kInts, false, AttrValue(std::vector<int64_t>{})},
             {"padding", AttrKind::kInts, false, AttrValue(std::vector<int64_t>{0})},
             {"ceil_mode", AttrKind::kBool, false, AttrValue(false)},
             {"count_include_pad", AttrKind::kBool, false, AttrValue(true)},
             {"divisor_override", AttrKind::kInt, true, AttrValue(NoneAttr{})}};
  s.infer = infer;
  s.kernel = kernel;
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
