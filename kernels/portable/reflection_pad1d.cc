#include "cortexm/portable/reflection_pad1d.h"

namespace cortexm::portable {

namespace {

template <typename T>
void reflect(const T* in, T* out, int64_t rows, int64_t width, int64_t out_width, int64_t left) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = in + r * width;
    T* orow = out + r * out_width;
    for (int64_t j = 0; j < out_width; ++j) orow[j] = row[reflection_source_index(j, width, left)];
  }
}

}  // namespace

Error reflection_pad1d_prepare(const ReflectionPad1dParams& p, Shape* output) {
  CORTEXM_RETURN_IF_ERROR(check_shape(p.input, "self"));
  CORTEXM_RETURN_IF_ERROR(check_element_size(p.element_size));
  if (p.input.rank < 1) return invalid("self.rank", p.input.rank, "must be >= 1");
  const int64_t width = p.input.dims[p.input.rank - 1];
  if (width < 1) return invalid("self.shape", width, "last dim must be >= 1", p.input.rank - 1);
  if (p.left >= width) return invalid("padding", p.left, "must be below the input width", 0);
  if (p.right >= width) return invalid("padding", p.right, "must be below the input width", 1);
  const int64_t out_width = width + p.left + p.right;
  if (out_width < 1) return invalid("padding", p.left, "leaves an output width below 1", 0);
  if (!reflection_stays_inside(width, p.left, p.right))
    return invalid("padding", p.left, "crops and reflects past the input", 0);
  if (output) {
    Shape out = p.input;
    out.dims[out.rank - 1] = out_width;
    *output = out;
  }
  return kOk;
}

void reflection_pad1d(const ReflectionPad1dParams& p, const void* input, void* output) {
  const int64_t width = p.input.dims[p.input.rank - 1];
  const int64_t out_width = width + p.left + p.right;
  const int64_t rows = dims_product(p.input, 0, p.input.rank - 1);
  switch (p.element_size) {
    case 1:
      reflect(static_cast<const uint8_t*>(input), static_cast<uint8_t*>(output), rows, width,
              out_width, p.left);
      break;
    case 2:
      reflect(static_cast<const uint16_t*>(input), static_cast<uint16_t*>(output), rows, width,
              out_width, p.left);
      break;
    case 4:
      reflect(static_cast<const uint32_t*>(input), static_cast<uint32_t*>(output), rows, width,
              out_width, p.left);
      break;
    default:
      reflect(static_cast<const uint64_t*>(input), static_cast<uint64_t*>(output), rows, width,
              out_width, p.left);
      break;
  }
}

}  // namespace cortexm::portable
