#include "cortexm/portable/permute.h"

#include <string.h>

namespace cortexm::portable {

namespace {

// Walks the output in order; in_strides[d] is the input element stride of output dim d.
template <typename T>
void permute_typed(const T* in, T* out, const int64_t* shape, const int64_t* in_strides,
                   int rank) {
  const int64_t inner = shape[rank - 1], inner_stride = in_strides[rank - 1];
  int64_t outer = 1;
  for (int d = 0; d < rank - 1; ++d) outer *= shape[d];
  int64_t index[kMaxDims] = {0, 0, 0, 0, 0, 0};
  int64_t offset = 0;
  for (int64_t r = 0; r < outer; ++r) {
    const T* src = in + offset;
    if (inner_stride == 1) {
      for (int64_t j = 0; j < inner; ++j) out[j] = src[j];
    } else {
      for (int64_t j = 0; j < inner; ++j) out[j] = src[j * inner_stride];
    }
    out += inner;
    for (int d = rank - 2; d >= 0; --d) {
      offset += in_strides[d];
      if (++index[d] < shape[d]) break;
      offset -= in_strides[d] * shape[d];
      index[d] = 0;
    }
  }
}

}  // namespace

Error permute_prepare(const PermuteParams& p, Shape* output) {
  CORTEXM_RETURN_IF_ERROR(check_shape(p.input, "self"));
  CORTEXM_RETURN_IF_ERROR(check_element_size(p.element_size));
  bool seen[kMaxDims] = {false, false, false, false, false, false};
  for (int i = 0; i < p.input.rank; ++i) {
    const int32_t d = p.perm[i];
    if (d < 0 || d >= p.input.rank) return invalid("dims", d, "must be in [0, rank)", i);
    if (seen[d]) return invalid("dims", d, "repeats a dim", i);
    seen[d] = true;
  }
  if (output) {
    Shape out;
    out.rank = p.input.rank;
    for (int i = 0; i < out.rank; ++i) out.dims[i] = p.input.dims[p.perm[i]];
    *output = out;
  }
  return kOk;
}

void permute(const PermuteParams& p, const void* input, void* output) {
  const int64_t numel = p.input.numel();
  if (numel == 0) return;
  // Drop size-1 dims: they do not move anything and shorten the walk.
  int64_t shape[kMaxDims], strides[kMaxDims], in_strides[kMaxDims];
  int64_t s = 1;
  for (int d = p.input.rank - 1; d >= 0; --d) {
    in_strides[d] = s;
    s *= p.input.dims[d];
  }
  int rank = 0;
  for (int i = 0; i < p.input.rank; ++i) {
    const int32_t d = p.perm[i];
    if (p.input.dims[d] == 1) continue;
    shape[rank] = p.input.dims[d];
    strides[rank] = in_strides[d];
    ++rank;
  }
  if (rank == 0) {
    memcpy(output, input, static_cast<size_t>(p.element_size));
    return;
  }
  switch (p.element_size) {
    case 1:
      permute_typed(static_cast<const uint8_t*>(input), static_cast<uint8_t*>(output), shape,
                    strides, rank);
      break;
    case 2:
      permute_typed(static_cast<const uint16_t*>(input), static_cast<uint16_t*>(output), shape,
                    strides, rank);
      break;
    case 4:
      permute_typed(static_cast<const uint32_t*>(input), static_cast<uint32_t*>(output), shape,
                    strides, rank);
      break;
    default:
      permute_typed(static_cast<const uint64_t*>(input), static_cast<uint64_t*>(output), shape,
                    strides, rank);
      break;
  }
}

}  // namespace cortexm::portable
