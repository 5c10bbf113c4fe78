// aten.avg_pool2d.default on float32 NCHW / CHW: torch's windows and divisors (count_include_pad
// counts padding inside the padded input, not past it; divisor_override replaces the count);
// portable::avg_pool2d_f32 (a program's FloatPool2d).
#include "ops/pool/pool2d_geometry.h"

namespace cortexm::ops {

namespace {

std::vector<TensorInfo> infer(const InferContext& ctx) {
  require_dtype(ctx, 0, {DType::kFloat32});
  const Pool2dGeometry g = pool2d_geometry(ctx, ctx.input(0), false);
  if (!ctx.is_none("divisor_override") && ctx.i("divisor_override") == 0)
    ctx.fail("attribute 'divisor_override' must not be 0");
  return {make_info(DType::kFloat32, pool2d_output_shape(ctx.input(0), g))};
}

portable::AvgPool2dParams portable_params(const OpArgs& args, const TensorInfo& input) {
  portable::AvgPool2dParams params;
  params.pool = portable_pool2d(args, input, pool2d_geometry(args, input, false));
  params.count_include_pad = args.b("count_include_pad");
  params.divisor_override = args.is_none("divisor_override") ? 0 : args.i("divisor_override");
  return params;
}

void kernel(const KernelContext& ctx) {
  const portable::AvgPool2dParams params = portable_params(ctx, ctx.input(0).info());
  check_portable(ctx, "avg_pool2d", portable::avg_pool2d_prepare(params));
  portable::avg_pool2d_f32(params, ctx.input(0).data<float>(), ctx.output().data<float>());
}

EncodedOp encode(program::ParamsBuilder& b, const NodeContext& node) {
  return encode_float_pool2d(b, node, fb::Pool2dKind_Avg, portable_params(node, node.input(0)));
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
  s.encode = encode;
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
