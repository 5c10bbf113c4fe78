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

// The input column of output column j of a row of `width` padded by `left` (negative: cropped),
// as torch computes it. The one definition of the index math: the portable kernel, the runtime's
// strided path and the interpreter's checks use it.
constexpr int64_t reflection_source_index(int64_t j, int64_t width, int64_t left) {
  const int64_t i = j < left ? 2 * left - j : j < width + left ? j : 2 * (width + left - 1) - j;
  return i + (left < 0 ? -left : 0) - (left > 0 ? left : 0);
}

// Whether every output column of width + left + right (>= 1) reads a column inside the row: the
// crops and reflections stay inside it. reflection_source_index is piecewise linear, so the ends
// of its three pieces suffice.
constexpr bool reflection_stays_inside(int64_t width, int64_t left, int64_t right) {
  const int64_t out_width = width + left + right;
  const int64_t ends[] = {0, left - 1, left, width + left - 1, width + left, out_width - 1};
  for (int64_t j : ends) {
    if (j < 0 || j >= out_width) continue;
    const int64_t i = reflection_source_index(j, width, left);
    if (i < 0 || i >= width) return false;
  }
  return true;
}

Error reflection_pad1d_prepare(const ReflectionPad1dParams& params, Shape* output = nullptr);

void reflection_pad1d(const ReflectionPad1dParams& params, const void* input, void* output);

}  // namespace cortexm::portable
