// aten.mm.default: self [M, K] @ mat2 [K, N] -> [M, N], float32 (portable::mm_f32; a program's FloatMatmul).
#include "cortexm/portable/matmul.h"
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_mm(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.mm.default";
  s.inputs = {{"self"}, {"mat2"}};
  s.infer = [](const InferContext& ctx) {
    require_dtype(ctx, 0, {DType::kFloat32});
    require_dtype(ctx, 1, {DType::kFloat32});
    require_rank(ctx, 0, {2});
    require_rank(ctx, 1, {2});
    const auto& a = ctx.input(0).shape;
    const auto& b = ctx.input(1).shape;
    if (a[1] != b[0])
      ctx.fail("self " + shape_to_string(a) + " and mat2 " + shape_to_string(b) +
               " cannot be multiplied (" + std::to_string(a[1]) + " != " + std::to_string(b[0]) +
               ")");
    return std::vector<TensorInfo>{make_info(DType::kFloat32, {a[0], b[1]})};
  };
  s.kernel = [](const KernelContext& ctx) {
    portable::MatmulParams params;
    params.m = ctx.input(0).shape()[0];
    params.k = ctx.input(0).shape()[1];
    params.n = ctx.input(1).shape()[1];
    check_portable(ctx, "mm", portable::matmul_prepare(params));
    portable::mm_f32(params, ctx.input(0).data<float>(), ctx.input(1).data<float>(),
                     ctx.output().data<float>());
  };
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    return program::encoded(fb::KernelId_FloatMatmul, fb::CreateFloatMatmulParams(b.fbb(), fb::MatmulKind_Mm));
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
