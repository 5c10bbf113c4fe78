// aten.rsqrt.default: 1 / sqrt(x) (portable::rsqrt_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_rsqrt(OpRegistry& registry) {
  register_portable_unary(registry, "aten.rsqrt.default", portable::UnaryOp::kRsqrt);
}

}  // namespace cortexm::ops
