// aten.mm.default: self [M, K] @ mat2 [K, N] -> [M, N], float32.
#include "ops/aten/gemm.h"
#include "ops/op_util.h"

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
    const auto& a = ctx.input(0).shape();
    const int64_t m = a[0], k = a[1], n = ctx.input(1).shape()[1];
    gemm_f32(m, n, k, ctx.input(0).data<float>(), k, ctx.input(1).data<float>(), n,
             ctx.output().data<float>(), n);
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
