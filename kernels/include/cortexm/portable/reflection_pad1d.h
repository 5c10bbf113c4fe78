// Reflection pad 1d (aten.reflection_pad1d): pads the last dim by mirroring (the edge is not
// repeated); left and right must be below the width; negative entries crop, as torch. Any rank
// >= 1 (torch takes [C, W] and [N, C, W]). Generic over the element size.
#pragma once

#include <cstdint>

#include "cortexm/portable/shape.h"

namespace cortexm::portable {

struct ReflectionPad1dParams {
  Shape input;
  int64_t left = 0;
  int64_t right = 0;
  int32_t element_size = 1;
};

Error reflection_pad1d_prepare(const ReflectionPad1dParams& params, Shape* output = nullptr);

void reflection_pad1d(const ReflectionPad1dParams& params, const void* input, void* output);

}  // namespace cortexm::portable
