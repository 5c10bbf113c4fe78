// aten.sub.Tensor: self - alpha * other, numpy broadcasting.
#include "ops/op_util.h"

namespace cortexm::ops {

void register_aten_sub_tensor(OpRegistry& registry) {
  register_binary_float(registry, "aten.sub.Tensor",
                        {{"alpha", AttrKind::kFloat, false, AttrValue(1.0)}},
                        [](const OpArgs& args) -> BinaryFn {
                          const float alpha = static_cast<float>(args.f("alpha"));
                          if (alpha == 1.0f) return [](float a, float b) { return a - b; };
                          return [alpha](float a, float b) { return a - alpha * b; };
                        });
}

}  // namespace cortexm::ops
