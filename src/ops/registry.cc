// OpRegistry::global(): every op of the op families, registered from the generated ops/ops.def
// (every register_<name> function of src/ops/<family>/*.cc; src/CMakeLists.txt).
#include "graph/op_schema.h"

namespace cortexm {

namespace ops {
#define CORTEXM_OP(fn) void fn(OpRegistry& registry);
#include "ops/ops.def"
#undef CORTEXM_OP
}  // namespace ops

const OpRegistry& OpRegistry::global() {
  static const OpRegistry registry = [] {
    OpRegistry r;
#define CORTEXM_OP(fn) ops::fn(r);
#include "ops/ops.def"
#undef CORTEXM_OP
    return r;
  }();
  return registry;
}

}  // namespace cortexm
