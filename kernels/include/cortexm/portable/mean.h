// Float32 mean over a set of dims (aten.mean.dim): each output element sums its reduced elements
// in double, in row-major order of the input, and divides by their count in double; an empty
// reduction gives NaN, as torch. The output is contiguous over the kept dims (keepdim only
// changes the shape, not the layout).
#pragma once

#include <cstdint>

#include "cortexm/portable/shape.h"

namespace cortexm::portable {

struct MeanParams {
  Shape input;
  int32_t num_dims = 0;  // 0 reduces every dim
  int64_t dims[kMaxDims] = {0, 0, 0, 0, 0, 0};  // negative counts from the end; no repeats
  bool keepdim = false;
};

Error mean_prepare(const MeanParams& params, Shape* output = nullptr);

void mean_f32(const MeanParams& params, const float* in, float* out);

// aten.sum.dim_IntList: the same sum in double, rounded once to float32 (0 for an empty one).
void sum_f32(const MeanParams& params, const float* in, float* out);

}  // namespace cortexm::portable
