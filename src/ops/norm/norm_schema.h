// The attributes of the cortex_m norms on the layer-norm kernel's arithmetic (quantized layer norm,
// quantized group norm and its int16 form): the set's shape, eps_term, product_shift and the output
// requantization, with the activation range defaulting to the output dtype's [lo, hi].
#pragma once

#include <cstdint>
#include <vector>

#include "graph/op_schema.h"

namespace cortexm::ops {

// symmetric: the output zero point defaults to 0 (int16 outputs), else it is required.
inline std::vector<AttrSpec> norm_attrs(const char* shape_attr, int64_t lo, int64_t hi, bool symmetric) {
  return {{shape_attr, AttrKind::kInt},
          {"eps_term", AttrKind::kInt},
          {"product_shift", AttrKind::kInt},
          symmetric ? AttrSpec{"output_zero_point", AttrKind::kInt, false, AttrValue(int64_t{0})}
                    : AttrSpec{"output_zero_point", AttrKind::kInt},
          {"output_multiplier", AttrKind::kInt},
          {"output_shift", AttrKind::kInt},
          {"activation_min", AttrKind::kInt, false, AttrValue(lo)},
          {"activation_max", AttrKind::kInt, false, AttrValue(hi)}};
}

}  // namespace cortexm::ops
