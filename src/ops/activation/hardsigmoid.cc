// aten.hardsigmoid.default: relu6(x + 3) / 6 (portable::hardsigmoid_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_hardsigmoid(OpRegistry& registry) {
  register_portable_unary(registry, "aten.hardsigmoid.default", portable::UnaryOp::kHardsigmoid);
}

}  // namespace cortexm::ops
