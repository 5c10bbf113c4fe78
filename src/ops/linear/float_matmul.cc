// aten's float32 matrix products, each run by a portable kernel (cortexm/portable/matmul.h) and a
// program's FloatMatmul:
// - aten.mm.default: self [M, K] @ mat2 [K, N] -> [M, N] (portable::mm_f32);
// - aten.bmm.default: self [B, M, K] @ mat2 [B, K, N] -> [B, M, N] (portable::bmm_f32);
// - aten.addmm.default: beta * self + alpha * (mat1 [M, K] @ mat2 [K, N]), self broadcast to
//   [M, N]. As in torch, self is ignored when beta == 0 (portable::addmm_f32).
#include "cortexm/portable/matmul.h"
#include "ops/portable_call.h"

namespace cortexm::ops {

namespace {

// Fails unless a's last dim (K) equals b's second to last.
void require_multipliable(const InferContext& ctx, const char* a_name, const std::vector<int64_t>& a,
                          const char* b_name, const std::vector<int64_t>& b) {
  const int64_t k_a = a.back(), k_b = b[b.size() - 2];
  if (k_a != k_b)
    ctx.fail(std::string(a_name) + " " + shape_to_string(a) + " and " + b_name + " " +
             shape_to_string(b) + " cannot be multiplied (" + std::to_string(k_a) + " != " +
             std::to_string(k_b) + ")");
}

EncodeFn encode_matmul(fb::MatmulKind kind) {
  return [kind](program::ParamsBuilder& b, const NodeContext& node) {
    if (kind != fb::MatmulKind_Addmm)
      return program::encoded(fb::KernelId_FloatMatmul, fb::CreateFloatMatmulParams(b.fbb(), kind));
    return program::encoded(fb::KernelId_FloatMatmul,
                            fb::CreateFloatMatmulParams(b.fbb(), kind, static_cast<float>(node.f("alpha")),
                                                        static_cast<float>(node.f("beta"))));
  };
}

// mm (batched false) or bmm.
void register_product(OpRegistry& registry, const char* name, bool batched) {
  OpSchema s;
  s.name = name;
  s.inputs = {{"self"}, {"mat2"}};
  s.infer = [batched](const InferContext& ctx) {
    const int64_t rank = batched ? 3 : 2;
    require_dtype(ctx, 0, {DType::kFloat32});
    require_dtype(ctx, 1, {DType::kFloat32});
    require_rank(ctx, 0, {rank});
    require_rank(ctx, 1, {rank});
    const auto& a = ctx.input(0).shape;
    const auto& b = ctx.input(1).shape;
    if (batched && a[0] != b[0])
      ctx.fail("self " + shape_to_string(a) + " and mat2 " + shape_to_string(b) +
               " have different batch sizes");
    require_multipliable(ctx, "self", a, "mat2", b);
    std::vector<int64_t> out(a.begin(), a.end() - 1);
    out.push_back(b.back());
    return std::vector<TensorInfo>{make_info(DType::kFloat32, out)};
  };
  s.kernel = [batched](const KernelContext& ctx) {
    const auto& a = ctx.input(0).shape();
    portable::MatmulParams params;
    if (batched) params.batch = a[0];
    params.m = a[a.size() - 2];
    params.k = a.back();
    params.n = ctx.input(1).shape().back();
    check_portable(ctx, batched ? "bmm" : "mm", portable::matmul_prepare(params));
    (batched ? portable::bmm_f32 : portable::mm_f32)(params, ctx.input(0).data<float>(),
                                                     ctx.input(1).data<float>(),
                                                     ctx.output().data<float>());
  };
  s.encode = encode_matmul(batched ? fb::MatmulKind_Bmm : fb::MatmulKind_Mm);
  registry.add(std::move(s));
}

}  // namespace

void register_aten_mm_bmm(OpRegistry& registry) {
  register_product(registry, "aten.mm.default", false);
  register_product(registry, "aten.bmm.default", true);
}

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
    require_multipliable(ctx, "mat1", a, "mat2", b);
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
  s.encode = encode_matmul(fb::MatmulKind_Addmm);
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
