// aten.add.Scalar: self + alpha * other, other and alpha float attributes.
#include "ops/op_util.h"

namespace cortexm::ops {

void register_aten_add_scalar(OpRegistry& registry) {
  register_unary_float(registry, "aten.add.Scalar",
                       {{"other", AttrKind::kFloat},
                        {"alpha", AttrKind::kFloat, false, AttrValue(1.0)}},
                       [](const OpArgs& args) -> UnaryFn {
                         const float c = static_cast<float>(args.f("alpha")) *
                                         static_cast<float>(args.f("other"));
                         return [c](float x) { return x + c; };
                       });
}

}  // namespace cortexm::ops
