// aten.hardtanh.default: clamp(x, min_val, max_val); relu6 is hardtanh(0, 6) (portable::clamp_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_hardtanh(OpRegistry& registry) {
  OpSchema s = portable_unary_schema(
      "aten.hardtanh.default",
      {{"min_val", AttrKind::kFloat, false, AttrValue(-1.0)},
       {"max_val", AttrKind::kFloat, false, AttrValue(1.0)}},
      [](const OpArgs& args) {
        portable::UnaryParams p;
        p.op = portable::UnaryOp::kClamp;
        p.a = static_cast<float>(args.f("min_val"));
        p.b = static_cast<float>(args.f("max_val"));
        if (p.a > p.b) args.fail("min_val must be <= max_val");
        return p;
      });
  s.keeps_qparams = true;
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
