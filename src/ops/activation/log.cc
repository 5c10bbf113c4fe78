// aten.log.default: the natural logarithm, NaN below 0 and -inf at 0 (portable::log_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_log(OpRegistry& registry) {
  register_portable_unary(registry, "aten.log.default", portable::UnaryOp::kLog);
}

}  // namespace cortexm::ops
