// aten.gelu.default: approximate "none" is x * 0.5 * (1 + erf(x / sqrt(2))); "tanh" is
// 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).
#include <cmath>

#include "ops/op_util.h"

namespace cortexm::ops {

namespace {

bool tanh_form(const OpArgs& args) {
  const std::string& approximate = args.s("approximate");
  if (approximate != "none" && approximate != "tanh")
    args.fail("attribute 'approximate' = \"" + approximate + "\" must be \"none\" or \"tanh\"");
  return approximate == "tanh";
}

}  // namespace

void register_aten_gelu(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.gelu.default";
  s.inputs = {{"self"}};
  s.attrs = {{"approximate", AttrKind::kString, false, AttrValue(std::string("none"))}};
  s.infer = [](const InferContext& ctx) {
    require_dtype(ctx, 0, {DType::kFloat32});
    tanh_form(ctx);
    return same_as_input(ctx);
  };
  s.kernel = [](const KernelContext& ctx) {
    const float* in = ctx.input(0).data<float>();
    float* out = ctx.output().data<float>();
    const int64_t n = ctx.input(0).numel();
    if (tanh_form(ctx)) {
      const float beta = static_cast<float>(std::sqrt(2.0 / M_PI));
      const float kappa = 0.044715f;
      for (int64_t i = 0; i < n; ++i) {
        const float x = in[i];
        out[i] = 0.5f * x * (1.0f + std::tanh(beta * (x + kappa * x * x * x)));
      }
    } else {
      const float inv_sqrt2 = static_cast<float>(M_SQRT1_2);
      for (int64_t i = 0; i < n; ++i) out[i] = in[i] * 0.5f * (1.0f + std::erf(in[i] * inv_sqrt2));
    }
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
