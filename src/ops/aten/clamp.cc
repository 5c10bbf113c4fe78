// aten.clamp.default: min(max(x, min), max) with either bound None (not both). As in torch, a
// min above max gives max everywhere and NaN stays NaN.
#include <limits>

#include "ops/op_util.h"

namespace cortexm::ops {

void register_aten_clamp(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.clamp.default";
  s.inputs = {{"self"}};
  s.attrs = {{"min", AttrKind::kFloat, true, AttrValue(NoneAttr{})},
             {"max", AttrKind::kFloat, true, AttrValue(NoneAttr{})}};
  s.infer = [](const InferContext& ctx) {
    require_dtype(ctx, 0, {DType::kFloat32});
    if (ctx.is_none("min") && ctx.is_none("max"))
      ctx.fail("attributes 'min' and 'max' are both None; at least one must be given");
    return same_as_input(ctx);
  };
  s.kernel = [](const KernelContext& ctx) {
    constexpr float kInf = std::numeric_limits<float>::infinity();
    const float lo = ctx.is_none("min") ? -kInf : static_cast<float>(ctx.f("min"));
    const float hi = ctx.is_none("max") ? kInf : static_cast<float>(ctx.f("max"));
    const float* in = ctx.input(0).data<float>();
    float* out = ctx.output().data<float>();
    const int64_t n = ctx.input(0).numel();
    for (int64_t i = 0; i < n; ++i) {
      const float v = in[i] < lo ? lo : in[i];
      out[i] = v > hi ? hi : v;
    }
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
