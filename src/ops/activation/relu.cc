// aten.relu.default: max(x, 0) (portable::relu_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_relu(OpRegistry& registry) {
  OpSchema s = portable_unary_schema("aten.relu.default", portable::UnaryOp::kRelu);
  s.keeps_qparams = true;
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
