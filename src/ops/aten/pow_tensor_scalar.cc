// aten.pow.Tensor_Scalar: self ** exponent in float32; x * x for exponent 2, std::pow otherwise.
#include <cmath>

#include "ops/op_util.h"

namespace cortexm::ops {

void register_aten_pow_tensor_scalar(OpRegistry& registry) {
  register_unary_float(registry, "aten.pow.Tensor_Scalar", {{"exponent", AttrKind::kFloat}},
                       [](const OpArgs& args) -> UnaryFn {
                         const float e = static_cast<float>(args.f("exponent"));
                         if (e == 2.0f) return [](float x) { return x * x; };
                         return [e](float x) { return std::pow(x, e); };
                       });
}

}  // namespace cortexm::ops
