// aten.clamp.default: min(max(x, min), max) with either bound None (not both). As in torch, a
// min above max gives max everywhere and NaN stays NaN (portable::clamp_f32).
#include <limits>

#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_clamp(OpRegistry& registry) {
  OpSchema s = portable_unary_schema(
      "aten.clamp.default",
      {{"min", AttrKind::kFloat, true, AttrValue(NoneAttr{})},
       {"max", AttrKind::kFloat, true, AttrValue(NoneAttr{})}},
      [](const OpArgs& args) {
        if (args.is_none("min") && args.is_none("max"))
          args.fail("attributes 'min' and 'max' are both None; at least one must be given");
        constexpr float kInf = std::numeric_limits<float>::infinity();
        portable::UnaryParams p;
        p.op = portable::UnaryOp::kClamp;
        p.a = args.is_none("min") ? -kInf : static_cast<float>(args.f("min"));
        p.b = args.is_none("max") ? kInf : static_cast<float>(args.f("max"));
        return p;
      });
  s.keeps_qparams = true;
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
