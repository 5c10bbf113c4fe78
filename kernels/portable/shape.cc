#include "cortexm/portable/shape.h"

namespace cortexm::portable {

Error make_shape(const int64_t* dims, int64_t rank, Shape* out, const char* argument) {
  if (rank < 0 || rank > kMaxDims) return invalid(argument, rank, "rank must be in [0, 6]");
  Shape s;
  s.rank = static_cast<int32_t>(rank);
  for (int i = 0; i < s.rank; ++i) s.dims[i] = dims[i];
  CORTEXM_RETURN_IF_ERROR(check_shape(s, argument));
  *out = s;
  return kOk;
}

Error resized_output(const Shape& input, int64_t out_h, int64_t out_w, Shape* output) {
  Shape out = input;
  out.dims[2] = out_h;
  out.dims[3] = out_w;
  CORTEXM_RETURN_IF_ERROR(check_shape(out, "output"));
  if (output) *output = out;
  return kOk;
}

Error check_shape(const Shape& shape, const char* argument) {
  if (shape.rank < 0 || shape.rank > kMaxDims)
    return invalid(argument, shape.rank, "rank must be in [0, 6]");
  int64_t n = 1;
  for (int i = 0; i < shape.rank; ++i) {
    if (shape.dims[i] < 0) return invalid(argument, shape.dims[i], "dims must be >= 0", i);
    if (shape.dims[i] > (int64_t{1} << 40)) return invalid(argument, shape.dims[i], "is too large", i);
    if (shape.dims[i] != 0 && n > (int64_t{1} << 59) / shape.dims[i])
      return invalid(argument, shape.dims[i], "makes too many elements", i);
    n *= shape.dims[i];
  }
  return kOk;
}

Error check_element_size(int32_t element_size) {
  if (element_size != 1 && element_size != 2 && element_size != 4 && element_size != 8)
    return invalid("element_size", element_size, "must be 1, 2, 4 or 8");
  return kOk;
}

Error normalize_dim(int64_t dim, int32_t rank, int32_t* out, const char* argument,
                    bool allow_scalar) {
  const int32_t bound = rank == 0 && allow_scalar ? 1 : rank;
  if (dim < -bound || dim >= bound) return invalid(argument, dim, "must be in [-rank, rank)");
  *out = static_cast<int32_t>(dim < 0 ? dim + bound : dim);
  return kOk;
}

}  // namespace cortexm::portable
