// Plain copy of numel elements: view_copy, squeeze_copy, unsqueeze_copy and a contiguous clone
// all move the same bytes in the same order.
#pragma once

#include <cstdint>

#include "cortexm/portable/shape.h"

namespace cortexm::portable {

struct CopyParams {
  int64_t numel = 0;
  int32_t element_size = 1;
};

Error copy_prepare(const CopyParams& params);

// input and output may be the same buffer (then nothing moves); otherwise they must not overlap.
void copy(const CopyParams& params, const void* input, void* output);

}  // namespace cortexm::portable
