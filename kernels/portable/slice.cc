#include "cortexm/portable/slice.h"

#include <string.h>

namespace cortexm::portable {

namespace {

struct Resolved {
  int32_t dim;
  int64_t start, length;
};

Resolved resolve(const SliceParams& p) {
  Resolved r;
  r.dim = static_cast<int32_t>(p.dim < 0 ? p.dim + p.input.rank : p.dim);
  const int64_t size = p.input.dims[r.dim];
  int64_t start = p.start, end = p.end;
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = start < 0 ? 0 : (start > size ? size : start);
  end = end < start ? start : (end > size ? size : end);
  r.start = start;
  r.length = end == start ? 0 : (end - start - 1) / p.step + 1;
  return r;
}

}  // namespace

Error slice_prepare(const SliceParams& p, Shape* output) {
  CORTEXM_RETURN_IF_ERROR(check_shape(p.input, "self"));
  CORTEXM_RETURN_IF_ERROR(check_element_size(p.element_size));
  if (p.input.rank < 1) return invalid("self.rank", p.input.rank, "must be >= 1");
  int32_t dim = 0;
  CORTEXM_RETURN_IF_ERROR(normalize_dim(p.dim, p.input.rank, &dim));
  if (p.step < 1) return invalid("step", p.step, "must be >= 1");
  if (output) {
    Shape out = p.input;
    out.dims[dim] = resolve(p).length;
    *output = out;
  }
  return kOk;
}

void slice(const SliceParams& p, const void* input, void* output) {
  const Resolved r = resolve(p);
  const int64_t outer = dims_product(p.input, 0, r.dim);
  const int64_t chunk = dims_product(p.input, r.dim + 1, p.input.rank) * p.element_size;
  const int64_t in_row = p.input.dims[r.dim] * chunk;
  const int64_t out_row = r.length * chunk;
  if (out_row == 0) return;
  const uint8_t* src = static_cast<const uint8_t*>(input) + r.start * chunk;
  uint8_t* dst = static_cast<uint8_t*>(output);
  for (int64_t o = 0; o < outer; ++o) {
    const uint8_t* row = src + o * in_row;
    uint8_t* out = dst + o * out_row;
    if (p.step == 1) {
      memcpy(out, row, static_cast<size_t>(out_row));
    } else {
      for (int64_t j = 0; j < r.length; ++j)
        memcpy(out + j * chunk, row + j * p.step * chunk, static_cast<size_t>(chunk));
    }
  }
}

}  // namespace cortexm::portable
