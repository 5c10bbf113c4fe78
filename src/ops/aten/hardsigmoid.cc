// aten.hardsigmoid.default: relu6(x + 3) / 6.
#include "ops/op_util.h"

namespace cortexm::ops {

void register_aten_hardsigmoid(OpRegistry& registry) {
  register_unary_float(registry, "aten.hardsigmoid.default", [](float x) {
    const float r = x + 3.0f;
    return (r < 0.0f ? 0.0f : (r > 6.0f ? 6.0f : r)) / 6.0f;
  });
}

}  // namespace cortexm::ops
