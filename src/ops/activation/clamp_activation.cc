// The clamp-like activations (relu, hardtanh, clamp, and hardsigmoid as a rescaled clamp) as
// bounds, for the lowerings and ActivationFusion (passes/convert_to_cortex_m.h).
#include <limits>

#include "passes/convert_to_cortex_m.h"

namespace cortexm::convert {

bool clamp_activation(const Node& node, ClampActivation* a) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const OpArgs args(node.op, node.name, node.attrs);
  *a = ClampActivation{};
  if (node.op == "aten.relu.default") {
    a->hi = kInf;
  } else if (node.op == "aten.hardtanh.default") {
    a->lo = static_cast<float>(args.f("min_val"));
    a->hi = static_cast<float>(args.f("max_val"));
  } else if (node.op == "aten.clamp.default") {
    a->lo = args.is_none("min") ? -kInf : static_cast<float>(args.f("min"));
    a->hi = args.is_none("max") ? kInf : static_cast<float>(args.f("max"));
  } else if (node.op == "aten.hardsigmoid.default") {  // relu6(x + 3) / 6
    a->scale = 1.0 / 6.0;
    a->offset = 0.5;
    a->hi = 1.0f;
  } else {
    return false;
  }
  return true;
}

}  // namespace cortexm::convert
