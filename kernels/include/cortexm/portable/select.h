// Select (aten.select_copy.int): the slice at `index` of `dim`, which is removed from the shape.
// index may be negative (counted from the end). Generic over the element size.
#pragma once

#include <cstdint>

#include "cortexm/portable/shape.h"

namespace cortexm::portable {

struct SelectParams {
  Shape input;  // rank >= 1
  int64_t dim = 0;
  int64_t index = 0;
  int32_t element_size = 1;
};

Error select_prepare(const SelectParams& params, Shape* output = nullptr);

void select(const SelectParams& params, const void* input, void* output);

}  // namespace cortexm::portable
