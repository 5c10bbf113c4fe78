// aten.adaptive_avg_pool2d.default on float32 NCHW / CHW: output cell i averages input rows
// [floor(i * in / out), ceil((i + 1) * in / out)), as torch (windows may overlap);
// portable::adaptive_avg_pool2d_f32 (a program's FloatPool2d).
#include "cortexm/portable/pool2d.h"
#include "ops/pool/pool2d_geometry.h"

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
  const std::vector<int64_t> hw = output_hw(ctx);
  portable::AdaptiveAvgPool2dParams params;
  params.input = portable_shape(ctx, ctx.input(0).shape());
  params.out_h = hw[0];
  params.out_w = hw[1];
  check_portable(ctx, "adaptive_avg_pool2d", portable::adaptive_avg_pool2d_prepare(params));
  portable::adaptive_avg_pool2d_f32(params, ctx.input(0).data<float>(), ctx.output().data<float>());
}

// The output size is the output tensor's: the table holds no window.
EncodedOp encode(program::ParamsBuilder& b, const NodeContext& node) {
  return encode_float_pool2d(b, node, fb::Pool2dKind_AdaptiveAvg, portable::AvgPool2dParams{});
}

}  // namespace

void register_aten_adaptive_avg_pool2d(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.adaptive_avg_pool2d.default";
  s.inputs = {{"self"}};
  s.attrs = {{"output_size", AttrKind::kInts}};
  s.infer = infer;
  s.kernel = kernel;
  s.encode = encode;
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
