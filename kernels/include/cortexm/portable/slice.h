// Slice (aten.slice_copy.Tensor): elements start, start + step, ... < end along `dim`. start and
// end may be negative (counted from the end) and are clamped to the dim as torch does; use
// kSliceEnd for an open end. Generic over the element size. split_with_sizes is a run of slices.
#pragma once

#include <cstdint>

#include "cortexm/portable/shape.h"

namespace cortexm::portable {

constexpr int64_t kSliceEnd = INT64_MAX;

struct SliceParams {
  Shape input;  // rank >= 1
  int64_t dim = 0;
  int64_t start = 0;
  int64_t end = kSliceEnd;
  int64_t step = 1;  // >= 1
  int32_t element_size = 1;
};

Error slice_prepare(const SliceParams& params, Shape* output = nullptr);

void slice(const SliceParams& params, const void* input, void* output);

}  // namespace cortexm::portable
