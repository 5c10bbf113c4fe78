// aten.hardswish.default: x * relu6(x + 3) / 6, multiplied before dividing as torch does
// (portable::hardswish_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_hardswish(OpRegistry& registry) {
  register_portable_unary(registry, "aten.hardswish.default", portable::UnaryOp::kHardswish);
}

}  // namespace cortexm::ops
