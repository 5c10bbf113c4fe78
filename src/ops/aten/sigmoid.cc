// aten.sigmoid.default: 1 / (1 + exp(-x)).
#include <cmath>

#include "ops/op_util.h"

namespace cortexm::ops {

void register_aten_sigmoid(OpRegistry& registry) {
  register_unary_float(registry, "aten.sigmoid.default",
                       [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
}

}  // namespace cortexm::ops
