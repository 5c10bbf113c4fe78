// aten.silu.default: x * sigmoid(x), computed as x / (1 + exp(-x)) like torch.
#include <cmath>

#include "ops/op_util.h"

namespace cortexm::ops {

void register_aten_silu(OpRegistry& registry) {
  register_unary_float(registry, "aten.silu.default",
                       [](float x) { return x / (1.0f + std::exp(-x)); });
}

}  // namespace cortexm::ops
