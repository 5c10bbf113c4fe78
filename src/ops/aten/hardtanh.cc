// aten.hardtanh.default: clamp(x, min_val, max_val); relu6 is hardtanh(0, 6).
#include "ops/op_util.h"

namespace cortexm::ops {

void register_aten_hardtanh(OpRegistry& registry) {
  register_unary_float(registry, "aten.hardtanh.default",
                       {{"min_val", AttrKind::kFloat, false, AttrValue(-1.0)},
                        {"max_val", AttrKind::kFloat, false, AttrValue(1.0)}},
                       [](const OpArgs& args) -> UnaryFn {
                         const float lo = static_cast<float>(args.f("min_val"));
                         const float hi = static_cast<float>(args.f("max_val"));
                         if (lo > hi) args.fail("min_val must be <= max_val");
                         return [lo, hi](float x) { return x < lo ? lo : (x > hi ? hi : x); };
                       });
}

}  // namespace cortexm::ops
