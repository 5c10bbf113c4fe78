// aten.minimum.default: elementwise min with numpy broadcasting; a NaN operand gives NaN
// (portable::minimum_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_minimum(OpRegistry& registry) {
  register_portable_binary(registry, "aten.minimum.default", portable::BinaryOp::kMinimum);
}

}  // namespace cortexm::ops
