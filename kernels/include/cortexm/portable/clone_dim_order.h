// dim_order_ops._clone_dim_order: copies a tensor from one physical dim order to another. A dim
// order lists the logical dims from outermost to innermost in memory ([0, 1, 2, 3] is contiguous,
// [0, 2, 3, 1] is channels-last for NCHW). It is a permute of the physical layouts.
#pragma once

#include "cortexm/portable/permute.h"

namespace cortexm::portable {

struct CloneDimOrderParams {
  Shape shape;  // logical shape
  int32_t input_dim_order[kMaxDims] = {0, 1, 2, 3, 4, 5};
  int32_t output_dim_order[kMaxDims] = {0, 1, 2, 3, 4, 5};
  int32_t element_size = 1;
};

// Validates both dim orders and derives the permute that performs the copy.
Error clone_dim_order_prepare(const CloneDimOrderParams& params, PermuteParams* permute_params);

// Same as permute(permute_params, input, output) with the params from prepare.
void clone_dim_order(const PermuteParams& permute_params, const void* input, void* output);

}  // namespace cortexm::portable
