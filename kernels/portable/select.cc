#include "cortexm/portable/select.h"

#include <string.h>

namespace cortexm::portable {

Error select_prepare(const SelectParams& p, Shape* output) {
  CORTEXM_RETURN_IF_ERROR(check_shape(p.input, "self"));
  CORTEXM_RETURN_IF_ERROR(check_element_size(p.element_size));
  if (p.input.rank < 1) return invalid("self.rank", p.input.rank, "must be >= 1");
  int32_t dim = 0;
  CORTEXM_RETURN_IF_ERROR(normalize_dim(p.dim, p.input.rank, &dim));
  const int64_t size = p.input.dims[dim];
  if (p.index < -size || p.index >= size)
    return invalid("index", p.index, "must be in [-size, size) of dim");
  if (output) {
    Shape out;
    out.rank = p.input.rank - 1;
    for (int d = 0, o = 0; d < p.input.rank; ++d)
      if (d != dim) out.dims[o++] = p.input.dims[d];
    *output = out;
  }
  return kOk;
}

void select(const SelectParams& p, const void* input, void* output) {
  const int32_t dim = static_cast<int32_t>(p.dim < 0 ? p.dim + p.input.rank : p.dim);
  const int64_t size = p.input.dims[dim];
  const int64_t index = p.index < 0 ? p.index + size : p.index;
  const int64_t outer = dims_product(p.input, 0, dim);
  const int64_t chunk = dims_product(p.input, dim + 1, p.input.rank) * p.element_size;
  if (chunk == 0) return;
  const uint8_t* src = static_cast<const uint8_t*>(input) + index * chunk;
  uint8_t* dst = static_cast<uint8_t*>(output);
  for (int64_t o = 0; o < outer; ++o)
    memcpy(dst + o * chunk, src + o * size * chunk, static_cast<size_t>(chunk));
}

}  // namespace cortexm::portable
