// aten.bmm.default: self [B, M, K] @ mat2 [B, K, N] -> [B, M, N], float32 (portable::bmm_f32; a program's FloatMatmul).
#include "cortexm/portable/matmul.h"
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_bmm(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.bmm.default";
  s.inputs = {{"self"}, {"mat2"}};
  s.infer = [](const InferContext& ctx) {
    require_dtype(ctx, 0, {DType::kFloat32});
    require_dtype(ctx, 1, {DType::kFloat32});
    require_rank(ctx, 0, {3});
    require_rank(ctx, 1, {3});
    const auto& a = ctx.input(0).shape;
    const auto& b = ctx.input(1).shape;
    if (a[0] != b[0])
      ctx.fail("self " + shape_to_string(a) + " and mat2 " + shape_to_string(b) +
               " have different batch sizes");
    if (a[2] != b[1])
      ctx.fail("self " + shape_to_string(a) + " and mat2 " + shape_to_string(b) +
               " cannot be multiplied (" + std::to_string(a[2]) + " != " + std::to_string(b[1]) +
               ")");
    return std::vector<TensorInfo>{make_info(DType::kFloat32, {a[0], a[1], b[2]})};
  };
  s.kernel = [](const KernelContext& ctx) {
    const auto& a = ctx.input(0).shape();
    portable::MatmulParams params;
    params.batch = a[0];
    params.m = a[1];
    params.k = a[2];
    params.n = ctx.input(1).shape()[2];
    check_portable(ctx, "bmm", portable::matmul_prepare(params));
    portable::bmm_f32(params, ctx.input(0).data<float>(), ctx.input(1).data<float>(),
                      ctx.output().data<float>());
  };
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    return program::encoded(fb::KernelId_FloatMatmul, fb::CreateFloatMatmulParams(b.fbb(), fb::MatmulKind_Bmm));
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
