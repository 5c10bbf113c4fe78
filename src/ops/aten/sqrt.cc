// aten.sqrt.default: NaN for negative inputs, as torch.
#include <cmath>

#include "ops/op_util.h"

namespace cortexm::ops {

void register_aten_sqrt(OpRegistry& registry) {
  register_unary_float(registry, "aten.sqrt.default", [](float x) { return std::sqrt(x); });
}

}  // namespace cortexm::ops
