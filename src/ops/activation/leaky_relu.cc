// aten.leaky_relu.default: x > 0 ? x : x * negative_slope (portable::leaky_relu_f32).
#include <cmath>

#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_leaky_relu(OpRegistry& registry) {
  const UnaryParamsFn make = [](const OpArgs& args) {
    portable::UnaryParams p;
    p.op = portable::UnaryOp::kLeakyRelu;
    p.a = finite_float_attr(args, "negative_slope");
    return p;
  };
  register_portable_unary(registry, "aten.leaky_relu.default",
                          {{"negative_slope", AttrKind::kFloat, false, AttrValue(0.01)}}, make);
}

}  // namespace cortexm::ops
