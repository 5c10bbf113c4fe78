// aten.addmm.default: beta * self + alpha * (mat1 [M, K] @ mat2 [K, N]), self broadcast to
// [M, N], float32. As in torch, self is ignored when beta == 0 (portable::addmm_f32; a program's FloatMatmul).
#include "cortexm/portable/matmul.h"
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_addmm(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.addmm.default";
  s.inputs = {{"self"}, {"mat1"}, {"mat2"}};
  s.attrs = {{"beta", AttrKind::kFloat, false, AttrValue(1.0)},
             {"alpha", AttrKind::kFloat, false, AttrValue(1.0)}};
  s.infer = [](const InferContext& ctx) {
    for (size_t i = 0; i < 3; ++i) require_dtype(ctx, i, {DType::kFloat32});
    require_rank(ctx, 1, {2});
    require_rank(ctx, 2, {2});
    const auto& self = ctx.input(0).shape;
    const auto& a = ctx.input(1).shape;
    const auto& b = ctx.input(2).shape;
    if (a[1] != b[0])
      ctx.fail("mat1 " + shape_to_string(a) + " and mat2 " + shape_to_string(b) +
               " cannot be multiplied (" + std::to_string(a[1]) + " != " + std::to_string(b[0]) +
               ")");
    const std::vector<int64_t> out{a[0], b[1]};
    bool broadcasts = self.size() <= 2;
    for (size_t i = 0; broadcasts && i < self.size(); ++i) {
      const int64_t d = self[self.size() - 1 - i];
      broadcasts = d == 1 || d == out[1 - i];
    }
    if (!broadcasts)
      ctx.fail("self " + shape_to_string(self) + " does not broadcast to the product's shape " +
               shape_to_string(out));
    return std::vector<TensorInfo>{make_info(DType::kFloat32, out)};
  };
  s.kernel = [](const KernelContext& ctx) {
    const auto& a = ctx.input(1).shape();
    portable::AddmmParams params;
    params.m = a[0];
    params.k = a[1];
    params.n = ctx.input(2).shape()[1];
    params.self = portable_shape(ctx, ctx.input(0).shape());
    params.alpha = static_cast<float>(ctx.f("alpha"));
    params.beta = static_cast<float>(ctx.f("beta"));
    check_portable(ctx, "addmm", portable::addmm_prepare(params));
    portable::addmm_f32(params, ctx.input(0).data<float>(), ctx.input(1).data<float>(),
                        ctx.input(2).data<float>(), ctx.output().data<float>());
  };
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    return program::encoded(fb::KernelId_FloatMatmul, fb::CreateFloatMatmulParams(b.fbb(), fb::MatmulKind_Addmm, static_cast<float>(node.f("alpha")), static_cast<float>(node.f("beta"))));
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
