// aten.elu.default: x > 0 ? x * scale : (exp(x * input_scale) - 1) * alpha * scale
// (portable::elu_f32); torch's celu and selu are elus.
#include <cmath>

#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_elu(OpRegistry& registry) {
  const UnaryParamsFn make = [](const OpArgs& args) {
    portable::UnaryParams p;
    p.op = portable::UnaryOp::kElu;
    p.a = finite_float_attr(args, "alpha");
    p.b = finite_float_attr(args, "scale");
    p.c = finite_float_attr(args, "input_scale");
    return p;
  };
  register_portable_unary(registry, "aten.elu.default",
                          {{"alpha", AttrKind::kFloat, false, AttrValue(1.0)},
                           {"scale", AttrKind::kFloat, false, AttrValue(1.0)},
                           {"input_scale", AttrKind::kFloat, false, AttrValue(1.0)}},
                          make);
}

}  // namespace cortexm::ops
