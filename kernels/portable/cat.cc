#include "cortexm/portable/cat.h"

#include <string.h>

namespace cortexm::portable {

Error cat_prepare(const CatParams& p, Shape* output) {
  CORTEXM_RETURN_IF_ERROR(check_element_size(p.element_size));
  if (p.num_inputs < 1 || p.inputs == nullptr)
    return invalid("tensors", p.num_inputs, "must hold at least one tensor");
  const Shape& first = p.inputs[0];
  CORTEXM_RETURN_IF_ERROR(check_shape(first, "tensors"));
  if (first.rank < 1) return invalid("tensors.rank", first.rank, "must be >= 1", 0);
  int32_t dim = 0;
  CORTEXM_RETURN_IF_ERROR(normalize_dim(p.dim, first.rank, &dim));
  Shape out = first;
  out.dims[dim] = 0;
  for (int32_t i = 0; i < p.num_inputs; ++i) {
    const Shape& in = p.inputs[i];
    CORTEXM_RETURN_IF_ERROR(check_shape(in, "tensors"));
    if (in.rank != first.rank) return invalid("tensors.rank", in.rank, "must equal tensor 0's", i);
    for (int d = 0; d < first.rank; ++d)
      if (d != dim && in.dims[d] != first.dims[d])
        return invalid("tensors.shape", in.dims[d], "must match tensor 0 outside dim", i);
    out.dims[dim] += in.dims[dim];
  }
  CORTEXM_RETURN_IF_ERROR(check_shape(out, "output"));
  if (output) *output = out;
  return kOk;
}

void cat(const CatParams& p, const void* const* inputs, void* output) {
  const Shape& first = p.inputs[0];
  const int32_t dim = static_cast<int32_t>(p.dim < 0 ? p.dim + first.rank : p.dim);
  const int64_t outer = dims_product(first, 0, dim);
  const int64_t inner = dims_product(first, dim + 1, first.rank) * p.element_size;
  int64_t out_row = 0;
  for (int32_t i = 0; i < p.num_inputs; ++i) out_row += p.inputs[i].dims[dim] * inner;
  uint8_t* dst = static_cast<uint8_t*>(output);
  int64_t column = 0;  // byte offset of input i inside an output row
  for (int32_t i = 0; i < p.num_inputs; ++i) {
    const int64_t row = p.inputs[i].dims[dim] * inner;
    const uint8_t* src = static_cast<const uint8_t*>(inputs[i]);
    if (row > 0)
      for (int64_t o = 0; o < outer; ++o)
        memcpy(dst + o * out_row + column, src + o * row, static_cast<size_t>(row));
    column += row;
  }
}

}  // namespace cortexm::portable
