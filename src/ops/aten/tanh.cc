// aten.tanh.default.
#include <cmath>

#include "ops/op_util.h"

namespace cortexm::ops {

void register_aten_tanh(OpRegistry& registry) {
  register_unary_float(registry, "aten.tanh.default", [](float x) { return std::tanh(x); });
}

}  // namespace cortexm::ops
