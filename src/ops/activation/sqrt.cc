// aten.sqrt.default: NaN for negative inputs, as torch (portable::sqrt_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_sqrt(OpRegistry& registry) {
  register_portable_unary(registry, "aten.sqrt.default", portable::UnaryOp::kSqrt);
}

}  // namespace cortexm::ops
