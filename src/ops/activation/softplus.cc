// aten.softplus.default: x * beta > threshold ? x : log1p(exp(x * beta)) / beta
// (portable::softplus_f32).
#include <cmath>

#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_softplus(OpRegistry& registry) {
  const UnaryParamsFn make = [](const OpArgs& args) {
    portable::UnaryParams p;
    p.op = portable::UnaryOp::kSoftplus;
    p.a = static_cast<float>(args.f("beta"));
    p.b = static_cast<float>(args.f("threshold"));
    if (!std::isfinite(p.a) || p.a == 0.0f)
      args.fail("attribute 'beta' = " + std::to_string(args.f("beta")) + " must be finite and not 0");
    if (std::isnan(p.b)) args.fail("attribute 'threshold' = nan must be a number");
    return p;
  };
  register_portable_unary(registry, "aten.softplus.default",
                          {{"beta", AttrKind::kFloat, false, AttrValue(1.0)},
                           {"threshold", AttrKind::kFloat, false, AttrValue(20.0)}},
                          make);
}

}  // namespace cortexm::ops
