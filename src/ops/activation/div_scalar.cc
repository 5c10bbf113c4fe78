// aten.div.Scalar: self / other (true division), other a float attribute (portable::div_scalar_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_div_scalar(OpRegistry& registry) {
  register_portable_unary(registry, "aten.div.Scalar", {{"other", AttrKind::kFloat}},
                          [](const OpArgs& args) {
                            portable::UnaryParams p;
                            p.op = portable::UnaryOp::kDivScalar;
                            p.a = static_cast<float>(args.f("other"));
                            return p;
                          });
}

}  // namespace cortexm::ops
