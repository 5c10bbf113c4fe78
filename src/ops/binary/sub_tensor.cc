// aten.sub.Tensor: self - alpha * other, numpy broadcasting (portable::sub_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_sub_tensor(OpRegistry& registry) {
  register_portable_binary(registry, "aten.sub.Tensor",
                           {{"alpha", AttrKind::kFloat, false, AttrValue(1.0)}},
                           [](const OpArgs& args) {
                             portable::BinaryParams p;
                             p.op = portable::BinaryOp::kSub;
                             p.alpha = static_cast<float>(args.f("alpha"));
                             return p;
                           });
}

}  // namespace cortexm::ops
