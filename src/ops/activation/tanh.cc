// aten.tanh.default (portable::tanh_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_tanh(OpRegistry& registry) {
  register_portable_unary(registry, "aten.tanh.default", portable::UnaryOp::kTanh);
}

}  // namespace cortexm::ops
