// aten.abs.default: portable::abs_f32.
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_abs(OpRegistry& registry) {
  register_portable_unary(registry, "aten.abs.default", portable::UnaryOp::kAbs);
}

}  // namespace cortexm::ops
