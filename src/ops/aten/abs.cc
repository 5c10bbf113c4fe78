// aten.abs.default.
#include <cmath>

#include "ops/op_util.h"

namespace cortexm::ops {

void register_aten_abs(OpRegistry& registry) {
  register_unary_float(registry, "aten.abs.default", [](float x) { return std::fabs(x); });
}

}  // namespace cortexm::ops
