// aten's float32 (x) float32 -> float32 ops with numpy broadcasting, each a portable::BinaryOp
// (portable::<op>_f32).
#include "ops/portable_call.h"

namespace cortexm::ops {

namespace {

struct FloatBinaryOp {
  const char* name;
  portable::BinaryOp op;
  bool alpha;  // self (op) alpha * other
};

constexpr FloatBinaryOp kFloatBinaryOps[] = {
    {"aten.add.Tensor", portable::BinaryOp::kAdd, true},
    {"aten.sub.Tensor", portable::BinaryOp::kSub, true},
    {"aten.mul.Tensor", portable::BinaryOp::kMul, false},
    {"aten.div.Tensor", portable::BinaryOp::kDiv, false},  // true division: x / 0 is +-inf or NaN
    // Elementwise max / min; a NaN operand gives NaN.
    {"aten.maximum.default", portable::BinaryOp::kMaximum, false},
    {"aten.minimum.default", portable::BinaryOp::kMinimum, false},
};

}  // namespace

void register_aten_float_binary_ops(OpRegistry& registry) {
  for (const FloatBinaryOp& op : kFloatBinaryOps) {
    if (!op.alpha) {
      register_portable_binary(registry, op.name, op.op);
      continue;
    }
    register_portable_binary(registry, op.name, {{"alpha", AttrKind::kFloat, false, AttrValue(1.0)}},
                             [op](const OpArgs& args) {
                               portable::BinaryParams p;
                               p.op = op.op;
                               p.alpha = static_cast<float>(args.f("alpha"));
                               return p;
                             });
  }
}

}  // namespace cortexm::ops
