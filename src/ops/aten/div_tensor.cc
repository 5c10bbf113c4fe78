// aten.div.Tensor: true division self / other, numpy broadcasting (x / 0 is +-inf or NaN).
#include "ops/op_util.h"

namespace cortexm::ops {

void register_aten_div_tensor(OpRegistry& registry) {
  register_binary_float(registry, "aten.div.Tensor", [](float a, float b) { return a / b; });
}

}  // namespace cortexm::ops
