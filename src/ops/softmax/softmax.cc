// aten._softmax.default: exp(x - max) / sum(exp(x - max)) along dim.
#include "ops/softmax/softmax_common.h"

namespace cortexm::ops {

void register_aten_softmax(OpRegistry& registry) {
  register_softmax_op(registry, "aten._softmax.default", false);
}

}  // namespace cortexm::ops
