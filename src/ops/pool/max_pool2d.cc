// aten.max_pool2d.default on float32 NCHW / CHW with dilation and ceil_mode; padding never wins
// (it is -inf) and a NaN in a window gives NaN, as in torch (portable::max_pool2d_f32; a program's FloatPool2d).
#include "ops/pool/pool2d_geometry.h"

namespace cortexm::ops {

namespace {

std::vector<TensorInfo> infer(const InferContext& ctx) {
  require_dtype(ctx, 0, {DType::kFloat32});
  const Pool2dGeometry g = pool2d_geometry(ctx, ctx.input(0), true);
  return {make_info(DType::kFloat32, pool2d_output_shape(ctx.input(0), g))};
}

void kernel(const KernelContext& ctx) {
  const Pool2dGeometry g = pool2d_geometry(ctx, ctx.input(0).info(), true);
  const portable::Pool2dParams params = portable_pool2d(ctx, ctx.input(0).info(), g);
  check_portable(ctx, "max_pool2d", portable::max_pool2d_prepare(params));
  portable::max_pool2d_f32(params, ctx.input(0).data<float>(), ctx.output().data<float>());
}

EncodedOp encode(program::ParamsBuilder& b, const NodeContext& node) {
  portable::AvgPool2dParams p;
  p.pool = portable_pool2d(node, node.input(0), pool2d_geometry(node, node.input(0), true));
  return encode_float_pool2d(b, node, fb::Pool2dKind_Max, p);
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
  s.keeps_qparams = true;
  s.infer = infer;
  s.kernel = kernel;
  s.encode = encode;
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
