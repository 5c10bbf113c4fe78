// aten.silu.default: x * sigmoid(x), computed as x / (1 + exp(-x)) like torch
// (portable::silu_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_silu(OpRegistry& registry) {
  register_portable_unary(registry, "aten.silu.default", portable::UnaryOp::kSilu);
}

}  // namespace cortexm::ops
