// Upsample nearest 2d (aten.upsample_nearest2d): NCHW resize to (out_h, out_w); the source index
// is floor(dst * (in / out)) with the ratio in float32, as torch. Generic over the element size.
#pragma once

#include <cstdint>

#include "cortexm/portable/shape.h"

namespace cortexm::portable {

struct UpsampleNearest2dParams {
  Shape input;  // [N, C, H, W], H and W >= 1
  int64_t out_h = 1;
  int64_t out_w = 1;
  int32_t element_size = 1;
};

Error upsample_nearest2d_prepare(const UpsampleNearest2dParams& params, Shape* output = nullptr);

void upsample_nearest2d(const UpsampleNearest2dParams& params, const void* input, void* output);

}  // namespace cortexm::portable
