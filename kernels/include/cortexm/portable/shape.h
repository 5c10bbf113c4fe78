// Logical tensor shapes for the portable kernels: at most 6 dims, outermost first, contiguous
// row-major storage (the last dim varies fastest). Rank 0 is a scalar of one element.
#pragma once

#include <cstdint>

#include "cortexm/kernels/status.h"

namespace cortexm::portable {

constexpr int kMaxDims = 6;

struct Shape {
  int32_t rank = 0;
  int64_t dims[kMaxDims] = {0, 0, 0, 0, 0, 0};

  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= dims[i];
    return n;
  }
};

// Builds a Shape from rank extents; fails on rank > 6 or a negative extent. `argument` names the
// tensor in the error ("self", "input", ...).
Error make_shape(const int64_t* dims, int64_t rank, Shape* out, const char* argument = "self");

// Checks rank in [0, 6] and extents >= 0 (with numel below 2^62 so byte counts do not overflow).
Error check_shape(const Shape& shape, const char* argument);

// `input` (N, C, H, W) with H, W set to out_h, out_w, checked as check_shape "output"; in *output
// when not null.
Error resized_output(const Shape& input, int64_t out_h, int64_t out_w, Shape* output);

// Checks element_size is 1, 2, 4 or 8 bytes.
Error check_element_size(int32_t element_size);

// dim in [-rank, rank) -> [0, rank) in *out; rank 0 accepts -1 and 0 like torch when allow_scalar.
Error normalize_dim(int64_t dim, int32_t rank, int32_t* out, const char* argument = "dim",
                    bool allow_scalar = false);

// Product of dims [begin, end).
inline int64_t dims_product(const Shape& shape, int begin, int end) {
  int64_t n = 1;
  for (int i = begin; i < end; ++i) n *= shape.dims[i];
  return n;
}

}  // namespace cortexm::portable
