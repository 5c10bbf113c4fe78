// aten.minimum.default: elementwise min with numpy broadcasting; a NaN operand gives NaN.
#include "ops/op_util.h"

namespace cortexm::ops {

void register_aten_minimum(OpRegistry& registry) {
  register_binary_float(registry, "aten.minimum.default", [](float a, float b) {
    if (a != a) return a;
    if (b != b) return b;
    return a < b ? a : b;
  });
}

}  // namespace cortexm::ops
