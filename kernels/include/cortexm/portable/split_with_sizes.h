// split_with_sizes (aten.split_with_sizes_copy): output k holds split_sizes[k] consecutive
// entries of `dim`; the sizes sum to the dim. Each output is a slice (slice.h) of the input.
#pragma once

#include <cstdint>

#include "cortexm/portable/slice.h"

namespace cortexm::portable {

struct SplitWithSizesParams {
  Shape input;  // rank >= 1
  int64_t dim = 0;
  const int64_t* split_sizes = nullptr;  // num_outputs sizes >= 0
  int32_t num_outputs = 0;
  int32_t element_size = 1;
};

Error split_with_sizes_prepare(const SplitWithSizesParams& params);

// The slice that produces output k.
SliceParams split_with_sizes_slice(const SplitWithSizesParams& params, int32_t k);

// outputs[k] receives output k.
void split_with_sizes(const SplitWithSizesParams& params, const void* input, void* const* outputs);

}  // namespace cortexm::portable
