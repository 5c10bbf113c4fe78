// Cat (aten.cat): concatenates tensors of one element size along `dim`; their shapes must be
// equal in every other dim. Generic over the element size.
#pragma once

#include <cstdint>

#include "cortexm/portable/shape.h"

namespace cortexm::portable {

struct CatParams {
  const Shape* inputs = nullptr;  // num_inputs shapes, all of one rank >= 1
  int32_t num_inputs = 0;
  int64_t dim = 0;  // negative counts from the end
  int32_t element_size = 1;
};

Error cat_prepare(const CatParams& params, Shape* output = nullptr);

// inputs[i] points at input i's data (may be null when that input is empty).
void cat(const CatParams& params, const void* const* inputs, void* output);

}  // namespace cortexm::portable
