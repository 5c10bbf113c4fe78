// aten.relu.default: max(x, 0) (portable::relu_f32).
#include "ops/aten/portable_call.h"

namespace cortexm::ops {

void register_aten_relu(OpRegistry& registry) {
  register_portable_unary(registry, "aten.relu.default", portable::UnaryOp::kRelu);
}

}  // namespace cortexm::ops
