// aten.mul.Tensor: self * other, numpy broadcasting (portable::mul_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_mul_tensor(OpRegistry& registry) {
  register_portable_binary(registry, "aten.mul.Tensor", portable::BinaryOp::kMul);
}

}  // namespace cortexm::ops
