// aten.maximum.default: elementwise max with numpy broadcasting; a NaN operand gives NaN
// (portable::maximum_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_maximum(OpRegistry& registry) {
  register_portable_binary(registry, "aten.maximum.default", portable::BinaryOp::kMaximum);
}

}  // namespace cortexm::ops
