// aten.layer_norm.default: layer norm over the trailing dims normalized_shape names (torch's
// aten.native_layer_norm output 0), optional weight and bias of shape normalized_shape; float32
// (portable::layer_norm_f32). A program runs it as the LayerNorm float fallback.
#include <cmath>

#include "cortexm/portable/layer_norm.h"
#include "ops/portable_call.h"
#include "program/params_builder.h"

namespace cortexm::ops {

namespace {

// normalized_shape, checked against the input's trailing dims; returns its length.
int32_t normalized_rank(const InferContext& ctx) {
  const std::vector<int64_t>& normalized = ctx.ints("normalized_shape");
  const std::vector<int64_t>& shape = ctx.input(0).shape;
  const size_t n = normalized.size();
  if (n < 1 || n > shape.size() ||
      !std::equal(normalized.begin(), normalized.end(), shape.end() - static_cast<int64_t>(n)))
    ctx.fail("attribute 'normalized_shape' = " + shape_to_string(normalized) +
             " must be 1 or more trailing dims of input " + shape_to_string(shape));
  const double eps = ctx.f("eps");
  if (!std::isfinite(eps) || eps < 0.0 || eps > 3.4e38)
    ctx.fail("attribute 'eps' = " + std::to_string(eps) + " must be finite, >= 0 and a float32");
  return static_cast<int32_t>(n);
}

std::vector<TensorInfo> infer(const InferContext& ctx) {
  require_dtype(ctx, 0, {DType::kFloat32});
  portable_shape(ctx, ctx.input(0).shape, "input");  // rank <= 6
  normalized_rank(ctx);
  const std::vector<int64_t>& normalized = ctx.ints("normalized_shape");
  for (size_t i : {size_t{1}, size_t{2}}) {
    if (!ctx.has_input(i)) continue;
    require_dtype(ctx, i, {DType::kFloat32});
    if (ctx.input(i).shape != normalized)
      ctx.fail(std::string(i == 1 ? "weight " : "bias ") + shape_to_string(ctx.input(i).shape) +
               " must have shape normalized_shape " + shape_to_string(normalized));
  }
  return same_as_input(ctx);
}

void kernel(const KernelContext& ctx) {
  portable::LayerNormParams params;
  params.input = portable_shape(ctx, ctx.input(0).shape(), "input");
  params.normalized_rank = static_cast<int32_t>(ctx.ints("normalized_shape").size());
  params.eps = static_cast<float>(ctx.f("eps"));
  check_portable(ctx, "layer_norm", portable::layer_norm_prepare(params));
  portable::layer_norm_f32(params, ctx.input(0).data<float>(),
                           ctx.has_input(1) ? ctx.input(1).data<float>() : nullptr,
                           ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr,
                           ctx.output().data<float>());
}

}  // namespace

void register_aten_layer_norm(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.layer_norm.default";
  s.inputs = {{"input"}, {"weight", true}, {"bias", true}};
  s.attrs = {{"normalized_shape", AttrKind::kInts},
             {"eps", AttrKind::kFloat, false, AttrValue(1e-5)}};
  s.infer = infer;
  s.kernel = kernel;
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    const auto params = fb::CreateLayerNormParams(b.fbb(), normalized_rank(node),
                                                  static_cast<float>(node.f("eps")));
    return program::encoded(fb::KernelId_LayerNorm, params);
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
