// aten.sigmoid.default: 1 / (1 + exp(-x)) (portable::sigmoid_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_sigmoid(OpRegistry& registry) {
  register_portable_unary(registry, "aten.sigmoid.default", portable::UnaryOp::kSigmoid);
}

}  // namespace cortexm::ops
