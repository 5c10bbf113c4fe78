// aten.neg.default: -x (portable::neg_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_neg(OpRegistry& registry) {
  register_portable_unary(registry, "aten.neg.default", portable::UnaryOp::kNeg);
}

}  // namespace cortexm::ops
