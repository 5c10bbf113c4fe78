// aten._log_softmax.default: (x - max) - log(sum(exp(x - max))) along dim.
#include "ops/softmax/softmax_common.h"

namespace cortexm::ops {

void register_aten_log_softmax(OpRegistry& registry) {
  register_softmax_op(registry, "aten._log_softmax.default", true);
}

}  // namespace cortexm::ops
