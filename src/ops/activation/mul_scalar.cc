// aten.mul.Scalar: self * other, other a float attribute (portable::mul_scalar_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_mul_scalar(OpRegistry& registry) {
  register_portable_unary(registry, "aten.mul.Scalar", {{"other", AttrKind::kFloat}},
                          [](const OpArgs& args) {
                            portable::UnaryParams p;
                            p.op = portable::UnaryOp::kMulScalar;
                            p.a = static_cast<float>(args.f("other"));
                            return p;
                          });
}

}  // namespace cortexm::ops
