// Constant pad N-d (aten.constant_pad_nd): pad holds (before, after) pairs from the last dim
// backwards, as torch; negative entries crop (the crops alone must fit the dim). The fill value
// is the raw bytes of one element, so any element type pads. Generic over the element size.
#pragma once

#include <cstdint>

#include "cortexm/portable/shape.h"

namespace cortexm::portable {

struct ConstantPadParams {
  Shape input;
  int32_t pad_length = 0;  // entries of pad used, even, <= 2 * input.rank
  int64_t pad[2 * kMaxDims] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  const void* value = nullptr;  // element_size bytes
  int32_t element_size = 1;
};

Error constant_pad_prepare(const ConstantPadParams& params, Shape* output = nullptr);

void constant_pad(const ConstantPadParams& params, const void* input, void* output);

}  // namespace cortexm::portable
