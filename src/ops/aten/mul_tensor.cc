// aten.mul.Tensor: self * other, numpy broadcasting.
#include "ops/op_util.h"

namespace cortexm::ops {

void register_aten_mul_tensor(OpRegistry& registry) {
  register_binary_float(registry, "aten.mul.Tensor", [](float a, float b) { return a * b; });
}

}  // namespace cortexm::ops
