// aten.reciprocal.default: 1 / x in float32 (portable::reciprocal_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_reciprocal(OpRegistry& registry) {
  register_portable_unary(registry, "aten.reciprocal.default", portable::UnaryOp::kReciprocal);
}

}  // namespace cortexm::ops
