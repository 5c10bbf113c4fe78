#include "cortexm/portable/permute.h"

#include <string.h>

namespace cortexm::portable {

namespace {

// Walks the output in order; in_strides[d] is the input element stride of output dim d. When the
// last output dim steps through the input (stride != 1) and the one before it is the input's
// contiguous run (NCHW -> NHWC: (HW, C) with strides (1, HW)), each block of those two dims goes
// column by column instead: contiguous reads, stores C apart, no index update per element.
template <typename T>
void permute_typed(const T* in, T* out, const int64_t* shape, const int64_t* in_strides,
                   int rank) {
  const bool transpose_tail = rank >= 2 && in_strides[rank - 1] != 1 && in_strides[rank - 2] == 1;
  const int walked = transpose_tail ? rank - 2 : rank - 1;  // dims the index steps through
  const size_t inner = static_cast<size_t>(shape[rank - 1]);
  const size_t rows = transpose_tail ? static_cast<size_t>(shape[rank - 2]) : 1;
  const size_t inner_stride = static_cast<size_t>(in_strides[rank - 1]);
  int64_t outer = 1;
  for (int d = 0; d < walked; ++d) outer *= shape[d];
  int64_t index[kMaxDims] = {0, 0, 0, 0, 0, 0};
  int64_t offset = 0;
  for (int64_t r = 0; r < outer; ++r) {
    const T* src = in + offset;
    if (transpose_tail) {
      for (size_t c = 0; c < inner; ++c) {
        const T* column = src + c * inner_stride;
        T* dst = out + c;
        for (size_t row = 0; row < rows; ++row, dst += inner) *dst = column[row];
      }
    } else if (inner_stride == 1) {
      for (size_t j = 0; j < inner; ++j) out[j] = src[j];
    } else {
      for (size_t j = 0; j < inner; ++j) out[j] = src[j * inner_stride];
    }
    out += rows * inner;
    for (int d = walked - 1; d >= 0; --d) {
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
  // Merge output dims that are adjacent in the input too: (N, H, W, C) of NCHW is (N, HW, C).
  int merged = 1;
  for (int i = 1; i < rank; ++i) {
    if (strides[merged - 1] == strides[i] * shape[i]) {
      shape[merged - 1] *= shape[i];
      strides[merged - 1] = strides[i];
    } else {
      shape[merged] = shape[i];
      strides[merged] = strides[i];
      ++merged;
    }
  }
  rank = merged;
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
