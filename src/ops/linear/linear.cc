// aten.linear.default: input [..., K] @ weight[N, K]^T + bias[N] -> [..., N], float32
// (portable::linear_f32; a program's FloatMatmul).
#include <vector>

#include "cortexm/portable/matmul.h"
#include "ops/portable_call.h"

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
  portable::LinearParams params;
  params.k = input.shape().back();
  params.n = ctx.input(1).shape()[0];
  params.m = 1;
  for (size_t d = 0; d + 1 < input.shape().size(); ++d) params.m *= input.shape()[d];
  check_portable(ctx, "linear", portable::linear_prepare(params));
  // Scratch for the transposed weight: the vectorized gemm path, same results as without it.
  std::vector<float> scratch(static_cast<size_t>(portable::linear_scratch_bytes(params)) /
                             sizeof(float));
  portable::linear_f32(params, input.data<float>(), ctx.input(1).data<float>(),
                       ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr,
                       ctx.output().data<float>(), scratch.empty() ? nullptr : scratch.data());
}

}  // namespace

void register_aten_linear(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.linear.default";
  s.inputs = {{"input"}, {"weight"}, {"bias", true}};
  s.infer = infer;
  s.kernel = kernel;
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    return program::encoded(fb::KernelId_FloatMatmul, fb::CreateFloatMatmulParams(b.fbb(), fb::MatmulKind_Linear));
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
