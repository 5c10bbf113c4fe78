// aten.adaptive_avg_pool2d.default on float32 NCHW / CHW: output cell i averages input rows
// [floor(i * in / out), ceil((i + 1) * in / out)), as torch (windows may overlap).
#include "ops/op_util.h"

namespace cortexm::ops {

namespace {

// [out_h, out_w].
std::vector<int64_t> output_hw(const OpArgs& args) {
  const std::vector<int64_t>& size = args.ints("output_size");
  if (size.size() != 2)
    args.fail("attribute 'output_size' = " + shape_to_string(size) + " has " +
              std::to_string(size.size()) + " values, expected 2");
  std::vector<int64_t> hw = size;
  if (hw[0] < 1 || hw[1] < 1)
    args.fail("attribute 'output_size' = " + shape_to_string(size) + " must be >= 1");
  return hw;
}

std::vector<TensorInfo> infer(const InferContext& ctx) {
  require_rank(ctx, 0, {3, 4});
  require_dtype(ctx, 0, {DType::kFloat32});
  const TensorInfo& in = ctx.input(0);
  for (int64_t d = in.rank() - 3; d < in.rank(); ++d)
    if (in.shape[d] == 0)
      ctx.fail("input " + shape_to_string(in.shape) + " has an empty non-batch dim");
  const std::vector<int64_t> hw = output_hw(ctx);
  std::vector<int64_t> shape = in.shape;
  shape[shape.size() - 2] = hw[0];
  shape[shape.size() - 1] = hw[1];
  return {make_info(DType::kFloat32, shape)};
}

void kernel(const KernelContext& ctx) {
  const std::vector<int64_t>& shape = ctx.input(0).shape();
  const size_t rank = shape.size();
  const int64_t h = shape[rank - 2], w = shape[rank - 1];
  const int64_t planes = ctx.input(0).numel() / (h * w);
  const std::vector<int64_t> hw = output_hw(ctx);
  const int64_t oh = hw[0], ow = hw[1];
  const float* x = ctx.input(0).data<float>();
  float* y = ctx.output().data<float>();
  for (int64_t p = 0; p < planes; ++p) {
    const float* plane = x + p * h * w;
    for (int64_t oy = 0; oy < oh; ++oy) {
      const int64_t y0 = oy * h / oh, y1 = ((oy + 1) * h + oh - 1) / oh;
      for (int64_t ox = 0; ox < ow; ++ox) {
        const int64_t x0 = ox * w / ow, x1 = ((ox + 1) * w + ow - 1) / ow;
        double sum = 0.0;
        for (int64_t iy = y0; iy < y1; ++iy)
          for (int64_t ix = x0; ix < x1; ++ix) sum += plane[iy * w + ix];
        y[(p * oh + oy) * ow + ox] =
            static_cast<float>(sum / static_cast<double>((y1 - y0) * (x1 - x0)));
      }
    }
  }
}

}  // namespace

void register_aten_adaptive_avg_pool2d(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.adaptive_avg_pool2d.default";
  s.inputs = {{"self"}};
  s.attrs = {{"output_size", AttrKind::kInts}};
  s.infer = infer;
  s.kernel = kernel;
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
