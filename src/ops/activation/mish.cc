// aten.mish.default: x * tanh(log1p(exp(x))) (portable::mish_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_mish(OpRegistry& registry) {
  register_portable_unary(registry, "aten.mish.default", portable::UnaryOp::kMish);
}

}  // namespace cortexm::ops
