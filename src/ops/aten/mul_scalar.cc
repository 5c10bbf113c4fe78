// aten.mul.Scalar: self * other, other a float attribute.
#include "ops/op_util.h"

namespace cortexm::ops {

void register_aten_mul_scalar(OpRegistry& registry) {
  register_unary_float(registry, "aten.mul.Scalar", {{"other", AttrKind::kFloat}},
                       [](const OpArgs& args) -> UnaryFn {
                         const float c = static_cast<float>(args.f("other"));
                         return [c](float x) { return x * c; };
                       });
}

}  // namespace cortexm::ops
