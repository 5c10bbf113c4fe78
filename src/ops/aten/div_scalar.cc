// aten.div.Scalar: self / other (true division), other a float attribute.
#include "ops/op_util.h"

namespace cortexm::ops {

void register_aten_div_scalar(OpRegistry& registry) {
  register_unary_float(registry, "aten.div.Scalar", {{"other", AttrKind::kFloat}},
                       [](const OpArgs& args) -> UnaryFn {
                         const float c = static_cast<float>(args.f("other"));
                         return [c](float x) { return x / c; };
                       });
}

}  // namespace cortexm::ops
