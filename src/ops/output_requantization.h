// The attributes of a cortex_m op's single-multiplier output requantization.
#pragma once

#include <cstdint>

#include "ops/cortex_m_util.h"

namespace cortexm::ops {

// Reads output_multiplier, output_shift, the output offset (attribute `offset`) and the
// activation range into p, offset and range within [lo, hi] (the output element's).
template <class P>
void read_output_requantization(const OpArgs& args, const char* offset, int64_t lo, int64_t hi, P* p) {
  p->output_offset = int32_attr(args, offset, lo, hi);
  p->multiplier = int32_attr(args, "output_multiplier", 0, INT32_MAX);
  p->shift = int32_attr(args, "output_shift", -31, 30);
  p->activation_min = int32_attr(args, "activation_min", lo, hi);
  p->activation_max = int32_attr(args, "activation_max", lo, hi);
}

}  // namespace cortexm::ops
