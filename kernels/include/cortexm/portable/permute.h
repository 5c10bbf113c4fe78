// Permute (aten.permute_copy): output dim i is input dim perm[i]. Generic over the element size,
// so int8, int16, int32 and float32 tensors all move with it. Buffers must be aligned to the
// element size and must not overlap.
#pragma once

#include <cstdint>

#include "cortexm/portable/shape.h"

namespace cortexm::portable {

struct PermuteParams {
  Shape input;
  int32_t perm[kMaxDims] = {0, 1, 2, 3, 4, 5};  // a permutation of [0, input.rank)
  int32_t element_size = 1;                      // bytes
};

// Validates the shape, the permutation and the element size; fills the output shape if asked.
Error permute_prepare(const PermuteParams& params, Shape* output = nullptr);

void permute(const PermuteParams& params, const void* input, void* output);

}  // namespace cortexm::portable
