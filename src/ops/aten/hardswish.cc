// aten.hardswish.default: x * relu6(x + 3) / 6, multiplied before dividing as torch does.
#include "ops/op_util.h"

namespace cortexm::ops {

void register_aten_hardswish(OpRegistry& registry) {
  register_unary_float(registry, "aten.hardswish.default", [](float x) {
    const float r = x + 3.0f;
    return x * (r < 0.0f ? 0.0f : (r > 6.0f ? 6.0f : r)) / 6.0f;
  });
}

}  // namespace cortexm::ops
