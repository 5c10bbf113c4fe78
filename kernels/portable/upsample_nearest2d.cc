#include "cortexm/portable/upsample_nearest2d.h"

#include <math.h>

namespace cortexm::portable {

namespace {

inline int64_t source_index(int64_t dst, float scale, int64_t in) {
  const int64_t i = static_cast<int64_t>(floorf(static_cast<float>(dst) * scale));
  return i < in - 1 ? i : in - 1;
}

template <typename T>
void upsample(const T* in, T* out, int64_t planes, int64_t h, int64_t w, int64_t oh, int64_t ow) {
  const float scale_h = static_cast<float>(h) / static_cast<float>(oh);
  const float scale_w = static_cast<float>(w) / static_cast<float>(ow);
  for (int64_t p = 0; p < planes; ++p) {
    const T* plane = in + p * h * w;
    for (int64_t y = 0; y < oh; ++y) {
      const T* row = plane + source_index(y, scale_h, h) * w;
      for (int64_t x = 0; x < ow; ++x) out[x] = row[source_index(x, scale_w, w)];
      out += ow;
    }
  }
}

}  // namespace

Error upsample_nearest2d_prepare(const UpsampleNearest2dParams& p, Shape* output) {
  CORTEXM_RETURN_IF_ERROR(check_shape(p.input, "self"));
  CORTEXM_RETURN_IF_ERROR(check_element_size(p.element_size));
  if (p.input.rank != 4) return invalid("self.rank", p.input.rank, "must be 4 (NCHW)");
  if (p.input.dims[2] < 1) return invalid("self.shape", p.input.dims[2], "must be >= 1", 2);
  if (p.input.dims[3] < 1) return invalid("self.shape", p.input.dims[3], "must be >= 1", 3);
  if (p.out_h < 1 || p.out_h > (int64_t{1} << 24))
    return invalid("output_size", p.out_h, "must be in [1, 2^24]", 0);
  if (p.out_w < 1 || p.out_w > (int64_t{1} << 24))
    return invalid("output_size", p.out_w, "must be in [1, 2^24]", 1);
  return resized_output(p.input, p.out_h, p.out_w, output);
}

void upsample_nearest2d(const UpsampleNearest2dParams& p, const void* input, void* output) {
  const int64_t planes = p.input.dims[0] * p.input.dims[1];
  const int64_t h = p.input.dims[2], w = p.input.dims[3];
  switch (p.element_size) {
    case 1:
      upsample(static_cast<const uint8_t*>(input), static_cast<uint8_t*>(output), planes, h, w,
               p.out_h, p.out_w);
      break;
    case 2:
      upsample(static_cast<const uint16_t*>(input), static_cast<uint16_t*>(output), planes, h, w,
               p.out_h, p.out_w);
      break;
    case 4:
      upsample(static_cast<const uint32_t*>(input), static_cast<uint32_t*>(output), planes, h, w,
               p.out_h, p.out_w);
      break;
    default:
      upsample(static_cast<const uint64_t*>(input), static_cast<uint64_t*>(output), planes, h, w,
               p.out_h, p.out_w);
      break;
  }
}

}  // namespace cortexm::portable
