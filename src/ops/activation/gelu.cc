// aten.gelu.default: approximate "none" is x * 0.5 * (1 + erf(x / sqrt(2))); "tanh" is
// 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))) (portable::gelu_f32 / gelu_tanh_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_gelu(OpRegistry& registry) {
  const UnaryParamsFn make = [](const OpArgs& args) {
    const std::string& approximate = args.s("approximate");
    if (approximate != "none" && approximate != "tanh")
      args.fail("attribute 'approximate' = \"" + approximate + "\" must be \"none\" or \"tanh\"");
    portable::UnaryParams p;
    p.op = approximate == "tanh" ? portable::UnaryOp::kGeluTanh : portable::UnaryOp::kGelu;
    return p;
  };
  register_portable_unary(
      registry, "aten.gelu.default",
      {{"approximate", AttrKind::kString, false, AttrValue(std::string("none"))}}, make);
}

}  // namespace cortexm::ops
