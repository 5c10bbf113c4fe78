// Rows along one dim of a numpy array, for the bindings of the row-wise ops (softmax,
// log_softmax): gathered into contiguous [rows, n] buffers and scattered back.
#pragma once

#include <vector>

#include "bindings/numpy_args.h"

namespace cortexm::bindings {

struct RowLayout {
  int64_t outer = 1, n = 1, inner = 1;  // array = [outer, n, inner] with n along dim
  int32_t rows() const { return static_cast<int32_t>(outer * inner); }
};

inline RowLayout row_layout(const char* op, const py::array& a, int64_t dim) {
  const int64_t rank = a.ndim();
  if (rank < 1) raise_value_error(op, "input must have at least one dim");
  if (dim < -rank || dim >= rank)
    raise_value_error(op, "dim = " + std::to_string(dim) + " is out of range for rank " +
                              std::to_string(rank));
  if (dim < 0) dim += rank;
  RowLayout l;
  for (int64_t d = 0; d < rank; ++d) (d < dim ? l.outer : d == dim ? l.n : l.inner) *= a.shape(d);
  if (a.size() == 0) raise_value_error(op, "input " + shape_string(a) + " must not be empty");
  if (l.outer * l.inner > INT32_MAX || l.n > INT32_MAX)
    raise_value_error(op, "input " + shape_string(a) + " is too large");
  return l;
}

inline std::vector<int8_t> gather_rows(const RowLayout& l, const int8_t* in) {
  std::vector<int8_t> rows(static_cast<size_t>(l.outer * l.n * l.inner));
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t i = 0; i < l.inner; ++i)
      for (int64_t k = 0; k < l.n; ++k)
        rows[static_cast<size_t>((o * l.inner + i) * l.n + k)] = in[(o * l.n + k) * l.inner + i];
  return rows;
}

inline void scatter_rows(const RowLayout& l, const std::vector<int8_t>& rows, int8_t* out) {
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t i = 0; i < l.inner; ++i)
      for (int64_t k = 0; k < l.n; ++k)
        out[(o * l.n + k) * l.inner + i] = rows[static_cast<size_t>((o * l.inner + i) * l.n + k)];
}

// Runs a row-wise kernel over x: rows gathered, the kernel with the GIL released, rows scattered.
template <typename Params>
py::array_t<int8_t> run_rows(const py::array_t<int8_t, py::array::c_style>& x, const RowLayout& l,
                             const Params& p, void (*kernel)(const Params&, const int8_t*, int8_t*)) {
  const std::vector<int8_t> rows = gather_rows(l, x.data());
  std::vector<int8_t> result(rows.size());
  {
    py::gil_scoped_release release;
    kernel(p, rows.data(), result.data());
  }
  py::array_t<int8_t> out(std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
  scatter_rows(l, result, out.mutable_data());
  return out;
}

}  // namespace cortexm::bindings
