// aten.div.Tensor: true division self / other, numpy broadcasting (x / 0 is +-inf or NaN)
// (portable::div_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_div_tensor(OpRegistry& registry) {
  register_portable_binary(registry, "aten.div.Tensor", portable::BinaryOp::kDiv);
}

}  // namespace cortexm::ops
