// aten.add.Tensor: self + alpha * other, numpy broadcasting (portable::add_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_add_tensor(OpRegistry& registry) {
  register_portable_binary(registry, "aten.add.Tensor",
                           {{"alpha", AttrKind::kFloat, false, AttrValue(1.0)}},
                           [](const OpArgs& args) {
                             portable::BinaryParams p;
                             p.op = portable::BinaryOp::kAdd;
                             p.alpha = static_cast<float>(args.f("alpha"));
                             return p;
                           });
}

}  // namespace cortexm::ops
