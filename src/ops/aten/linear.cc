// aten.linear.default: input [..., K] @ weight[N, K]^T + bias[N] -> [..., N], float32.
#include <vector>

#include "ops/aten/gemm.h"
#include "ops/op_util.h"

namespace cortexm::ops {

namespace {

std::vector<TensorInfo> infer(const InferContext& ctx) {
  require_dtype(ctx, 0, {DType::kFloat32});
  require_dtype(ctx, 1, {DType::kFloat32});
  require_rank(ctx, 1, {2});
  const TensorInfo& input = ctx.input(0);
  const TensorInfo& weight = ctx.input(1);
  if (input.rank() < 1) ctx.fail("input " + info_to_string(input) + " must have rank >= 1");
  const int64_t k = input.shape.back(), n = weight.shape[0];
  if (weight.shape[1] != k)
    ctx.fail("weight " + shape_to_string(weight.shape) + " does not match input " +
             shape_to_string(input.shape) + ": expected [N, " + std::to_string(k) + "]");
  if (ctx.has_input(2)) {
    require_dtype(ctx, 2, {DType::kFloat32});
    if (ctx.input(2).shape != std::vector<int64_t>{n})
      ctx.fail("bias " + shape_to_string(ctx.input(2).shape) + " must be [" + std::to_string(n) +
               "]");
  }
  std::vector<int64_t> shape = input.shape;
  shape.back() = n;
  return {make_info(DType::kFloat32, shape)};
}

void kernel(const KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  const Tensor& weight = ctx.input(1);
  const int64_t k = input.shape().back(), n = weight.shape()[0];
  int64_t m = 1;
  for (size_t d = 0; d + 1 < input.shape().size(); ++d) m *= input.shape()[d];
  // Weight transposed to [K, N] so the product runs i-k-j.
  std::vector<float> wt(static_cast<size_t>(k * n));
  const float* w = weight.data<float>();
  for (int64_t j = 0; j < n; ++j)
    for (int64_t p = 0; p < k; ++p) wt[p * n + j] = w[j * k + p];
  float* out = ctx.output().data<float>();
  gemm_f32(m, n, k, input.data<float>(), k, wt.data(), n, out, n);
  if (ctx.has_input(2)) {
    const float* bias = ctx.input(2).data<float>();
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) out[i * n + j] += bias[j];
  }
}

}  // namespace

void register_aten_linear(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.linear.default";
  s.inputs = {{"input"}, {"weight"}, {"bias", true}};
  s.infer = infer;
  s.kernel = kernel;
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
