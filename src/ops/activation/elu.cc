// aten.elu.default: x > 0 ? x * scale : (exp(x * input_scale) - 1) * alpha * scale
// (portable::elu_f32); torch's celu and selu are elus.
#include <cmath>

#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_elu(OpRegistry& registry) {
  const UnaryParamsFn make = [](const OpArgs& args) {
    portable::UnaryParams p;
    p.op = portable::UnaryOp::kElu;
    p.a = static_cast<float>(args.f("alpha"));
    p.b = static_cast<float>(args.f("scale"));
    p.c = static_cast<float>(args.f("input_scale"));
    for (const char* name : {"alpha", "scale", "input_scale"})
      if (!std::isfinite(static_cast<float>(args.f(name))))
        args.fail(std::string("attribute '") + name + "' = " + std::to_string(args.f(name)) +
                  " must be finite");
    return p;
  };
  register_portable_unary(registry, "aten.elu.default",
                          {{"alpha", AttrKind::kFloat, false, AttrValue(1.0)},
                           {"scale", AttrKind::kFloat, false, AttrValue(1.0)},
                           {"input_scale", AttrKind::kFloat, false, AttrValue(1.0)}},
                          make);
}

}  // namespace cortexm::ops
