// aten's float32 ops of a tensor and a float attribute, self (op) c, each a portable::UnaryOp
// whose constant is c (portable::<op>_scalar_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

namespace {

struct ScalarOp {
  const char* name;
  portable::UnaryOp op;
  const char* operand;  // the attribute c comes from
  bool alpha;           // c = float(alpha) * float(operand), portable::scalar_times_alpha
};

constexpr ScalarOp kScalarOps[] = {
    {"aten.add.Scalar", portable::UnaryOp::kAddScalar, "other", true},  // self + alpha * other
    {"aten.sub.Scalar", portable::UnaryOp::kSubScalar, "other", true},  // self - alpha * other
    {"aten.mul.Scalar", portable::UnaryOp::kMulScalar, "other", false},
    {"aten.div.Scalar", portable::UnaryOp::kDivScalar, "other", false},  // true division
    // self ** exponent: x * x for exponent 2, powf otherwise.
    {"aten.pow.Tensor_Scalar", portable::UnaryOp::kPowScalar, "exponent", false},
};

}  // namespace

void register_aten_scalar_ops(OpRegistry& registry) {
  for (const ScalarOp& op : kScalarOps) {
    std::vector<AttrSpec> attrs = {{op.operand, AttrKind::kFloat}};
    if (op.alpha) attrs.push_back({"alpha", AttrKind::kFloat, false, AttrValue(1.0)});
    register_portable_unary(registry, op.name, std::move(attrs), [op](const OpArgs& args) {
      portable::UnaryParams p;
      p.op = op.op;
      p.a = op.alpha ? portable::scalar_times_alpha(args.f(op.operand), args.f("alpha"))
                     : static_cast<float>(args.f(op.operand));
      return p;
    });
  }
}

}  // namespace cortexm::ops
