// aten.exp.default: e^x (portable::exp_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_exp(OpRegistry& registry) {
  register_portable_unary(registry, "aten.exp.default", portable::UnaryOp::kExp);
}

}  // namespace cortexm::ops
