// Broadcast shape of two numpy operands, for the binary elementwise op bindings.
#pragma once

#include <vector>

#include "bindings/numpy_args.h"
#include "cortexm/kernels/broadcast.h"

namespace cortexm::bindings {

struct BroadcastOperands {
  BroadcastShape shape;
  std::vector<py::ssize_t> output_shape;
};

inline BroadcastOperands broadcast_operands(const char* op, const py::array& lhs,
                                            const py::array& rhs) {
  std::vector<int64_t> ld(lhs.shape(), lhs.shape() + lhs.ndim());
  std::vector<int64_t> rd(rhs.shape(), rhs.shape() + rhs.ndim());
  BroadcastOperands out;
  if (lhs.size() == 0 || rhs.size() == 0)
    raise_value_error(op, "self " + shape_string(lhs) + " and other " + shape_string(rhs) +
                              " must not be empty");
  check(op, make_broadcast_shape(ld.data(), static_cast<int>(ld.size()), rd.data(),
                                 static_cast<int>(rd.size()), &out.shape));
  const size_t rank = ld.size() > rd.size() ? ld.size() : rd.size();
  for (size_t i = 0; i < rank; ++i) {
    const int64_t l = i + ld.size() >= rank ? ld[i + ld.size() - rank] : 1;
    const int64_t r = i + rd.size() >= rank ? rd[i + rd.size() - rank] : 1;
    out.output_shape.push_back(static_cast<py::ssize_t>(l > r ? l : r));
  }
  return out;
}

}  // namespace cortexm::bindings
