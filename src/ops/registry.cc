// OpRegistry::global(): every op of src/ops, registered from the one list ops/ops.def.
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
