// aten.pow.Tensor_Scalar: self ** exponent in float32; x * x for exponent 2, powf otherwise
// (portable::pow_scalar_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

void register_aten_pow_tensor_scalar(OpRegistry& registry) {
  register_portable_unary(registry, "aten.pow.Tensor_Scalar", {{"exponent", AttrKind::kFloat}},
                          [](const OpArgs& args) {
                            portable::UnaryParams p;
                            p.op = portable::UnaryOp::kPowScalar;
                            p.a = static_cast<float>(args.f("exponent"));
                            return p;
                          });
}

}  // namespace cortexm::ops
