// aten.add.Scalar: self + alpha * other, other and alpha float attributes (portable::add_scalar_f32
// with c = float(alpha) * float(other)).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_add_scalar(OpRegistry& registry) {
  register_portable_unary(registry, "aten.add.Scalar",
                          {{"other", AttrKind::kFloat},
                           {"alpha", AttrKind::kFloat, false, AttrValue(1.0)}},
                          [](const OpArgs& args) {
                            portable::UnaryParams p;
                            p.op = portable::UnaryOp::kAddScalar;
                            p.a = portable::scalar_times_alpha(args.f("other"), args.f("alpha"));
                            return p;
                          });
}

}  // namespace cortexm::ops
