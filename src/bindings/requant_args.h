// Requantize arguments shared by the op bindings: zero points, multiplier / shift pairs and the
// activation range, each range-checked with the argument's name; plus the kernel scratch buffer.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "bindings/numpy_args.h"
#include "cortexm/kernels/isa.h"

namespace cortexm::bindings {

// The lowest and highest value of the quantized type T, as Python sees them (defaults of
// activation_min / activation_max).
template <typename T>
constexpr int qmin = std::numeric_limits<T>::min();
template <typename T>
constexpr int qmax = std::numeric_limits<T>::max();

template <typename T = int8_t>
int32_t require_zero_point(const char* op, const char* name, const IntArg& value) {
  return require_int(op, name, value, qmin<T>, qmax<T>);
}

inline int32_t require_multiplier(const char* op, const char* name, const IntArg& value) {
  return require_int(op, name, value, 0, INT32_MAX);
}

inline int32_t require_shift(const char* op, const char* name, const IntArg& value) {
  return require_int(op, name, value, -31, 30);
}

// activation_min and activation_max of a T output into params.
template <typename T, typename Params>
void require_activation_range(const char* op, const IntArg& activation_min,
                              const IntArg& activation_max, Params* params) {
  params->activation_min = require_int(op, "activation_min", activation_min, qmin<T>, qmax<T>);
  params->activation_max = require_int(op, "activation_max", activation_max, qmin<T>, qmax<T>);
}

// output_multiplier, output_shift and the activation range of a T output into params.
template <typename T, typename Params>
void require_output_requantize(const char* op, const IntArg& output_multiplier,
                               const IntArg& output_shift, const IntArg& activation_min,
                               const IntArg& activation_max, Params* params) {
  params->output_multiplier = require_multiplier(op, "output_multiplier", output_multiplier);
  params->output_shift = require_shift(op, "output_shift", output_shift);
  require_activation_range<T>(op, activation_min, activation_max, params);
}

// An optional bound (None -> fallback), else an int in [lo, hi].
inline int32_t require_optional_int(const char* op, const char* name, const py::handle& value,
                                    int64_t fallback, int64_t lo, int64_t hi) {
  if (value.is_none()) return static_cast<int32_t>(fallback);
  return require_int(op, name, IntArg{py::reinterpret_borrow<py::object>(value)}, lo, hi);
}

// Whether output_dtype is int16 (else int8); anything else is an error.
inline bool require_int16_output(const char* op, const py::handle& output_dtype) {
  const py::dtype dtype = py::dtype::from_args(py::reinterpret_borrow<py::object>(output_dtype));
  const bool int16 = dtype.is(py::dtype::of<int16_t>());
  if (!int16 && !dtype.is(py::dtype::of<int8_t>()))
    raise_value_error(op, "output_dtype " + std::string(py::str(dtype)) + " must be int8 or int16");
  return int16;
}

// Runs kernel(scratch) with the GIL released on zeroed, 4-byte aligned scratch of at least
// scratch_bytes (never empty, so the pointer is not null). kernel must not touch Python objects.
template <typename Kernel>
void run_released(size_t scratch_bytes, Kernel kernel) {
  std::vector<int32_t> scratch(scratch_bytes / sizeof(int32_t) + 1);
  py::gil_scoped_release release;
  kernel(static_cast<void*>(scratch.data()));
}

// An op with a weight and an optional bias (conv, linear): checks prepare(p), then runs
// kernel(p, input, weight, bias, output, scratch) into a new TOut array of out_shape.
template <typename TOut, typename Operands, typename Params, typename Kernel>
py::array_t<TOut> run_weighted(const char* op, const Operands& a, const Params& p,
                               Error (*prepare)(const Params&),
                               size_t (*scratch_size)(const Params&, Isa), Kernel kernel,
                               const std::vector<py::ssize_t>& out_shape) {
  check(op, prepare(p));
  py::array_t<TOut> out(out_shape);
  const auto* in_data = a.input.data();
  const auto* weight_data = a.weight.data();
  TOut* out_data = out.mutable_data();
  run_released(scratch_size(p, Isa::kScalar), [&](void* scratch) {
    kernel(p, in_data, weight_data, a.bias_data, out_data, scratch);
  });
  return out;
}

// A new array of T with the shape of `like`.
template <typename T>
py::array_t<T> array_like(const py::array& like) {
  return py::array_t<T>(std::vector<py::ssize_t>(like.shape(), like.shape() + like.ndim()));
}

}  // namespace cortexm::bindings
