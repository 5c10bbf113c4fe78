// aten.relu.default: max(x, 0).
#include "ops/op_util.h"

namespace cortexm::ops {

void register_aten_relu(OpRegistry& registry) {
  register_unary_float(registry, "aten.relu.default", [](float x) { return x > 0.0f ? x : 0.0f; });
}

}  // namespace cortexm::ops
