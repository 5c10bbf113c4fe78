// Argument checking shared by the numpy-facing op bindings. Every failure raises ValueError naming
// the op, the argument and its value; nothing reaches a kernel unchecked.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/error_message.h"
#include "cortexm/kernels/status.h"

namespace cortexm::bindings {

namespace py = pybind11;

[[noreturn]] inline void raise_value_error(const char* op, const std::string& what) {
  throw py::value_error(std::string(op) + ": " + what);
}

inline void check(const char* op, const Error& error) {
  if (!error.ok()) throw py::value_error(error_message(op, error));
}

inline std::string shape_string(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) {
    if (i) s += ", ";
    s += std::to_string(a.shape(i));
  }
  if (a.ndim() == 1) s += ",";
  return s + ")";
}

// A C-contiguous array of dtype T with rank in [min_rank, max_rank]; wrong dtype is an error, not a cast.
template <typename T>
py::array_t<T, py::array::c_style> require_array(const char* op, const char* name,
                                                 const py::handle& obj, int min_rank,
                                                 int max_rank) {
  if (!py::isinstance<py::array>(obj))
    raise_value_error(op, std::string(name) + " must be a numpy array, got " +
                              std::string(py::str(py::type::of(obj).attr("__name__"))));
  auto a = py::reinterpret_borrow<py::array>(obj);
  const auto expected = py::dtype::of<T>();
  if (!a.dtype().is(expected))
    raise_value_error(op, std::string(name) + " dtype " + std::string(py::str(a.dtype())) +
                              " must be " + std::string(py::str(expected)));
  if (a.ndim() < min_rank || a.ndim() > max_rank) {
    std::string want = min_rank == max_rank ? std::to_string(min_rank)
                                            : "in [" + std::to_string(min_rank) + ", " +
                                                  std::to_string(max_rank) + "]";
    raise_value_error(op, std::string(name) + " rank " + std::to_string(a.ndim()) + " (shape " +
                              shape_string(a) + ") must be " + want);
  }
  // Not array_t::ensure: it returns null and clears the error when the C-contiguous copy fails.
  try {
    return py::array_t<T, py::array::c_style>(py::reinterpret_borrow<py::object>(a));
  } catch (py::error_already_set& e) {
    const std::string what = std::string(name) + " (shape " + shape_string(a) + "): cannot make a C-contiguous copy";
    if (!e.matches(PyExc_MemoryError)) raise_value_error(op, what + ": " + e.what());
    PyErr_SetString(PyExc_MemoryError, (std::string(op) + ": " + what + ": out of memory").c_str());
    throw py::error_already_set();
  }
}

inline int32_t require_int(const char* op, const char* name, int64_t value, int64_t lo, int64_t hi) {
  if (value < lo || value > hi)
    raise_value_error(op, std::string(name) + " = " + std::to_string(value) + " must be in [" +
                              std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return static_cast<int32_t>(value);
}

// An int scalar argument as the caller passed it: the binding converts it with require_int, so
// anything that is not an int raises ValueError naming the argument instead of pybind's TypeError.
struct IntArg {
  py::object value;
};

// A Python int or a numpy integer; not bool, float, str or None.
inline bool is_int_object(const py::handle& v) {
  return (PyLong_Check(v.ptr()) && !PyBool_Check(v.ptr())) ||
         py::isinstance(v, py::module_::import("numpy").attr("integer"));
}

// The int64 value of an int argument (Python int or numpy integer; not bool, float or str).
inline int64_t require_int64(const char* op, const char* name, const IntArg& arg) {
  const py::handle v = arg.value;
  if (!is_int_object(v))
    raise_value_error(op, std::string(name) + " = " + std::string(py::repr(v)) +
                              " must be an int, got " +
                              std::string(py::str(py::type::of(v).attr("__name__"))));
  try {
    return v.cast<int64_t>();
  } catch (const py::cast_error&) {
    raise_value_error(op, std::string(name) + " = " + std::string(py::repr(v)) +
                              " does not fit in int64");
  }
}

inline int32_t require_int(const char* op, const char* name, const IntArg& value, int64_t lo,
                           int64_t hi) {
  return require_int(op, name, require_int64(op, name, value), lo, hi);
}

// A bool or numpy bool; pybind's own bool conversion would take 2, 0.5 or None as well.
inline bool require_bool(const char* op, const char* name, const py::handle& value) {
  if (!PyBool_Check(value.ptr()) &&
      !py::isinstance(value, py::module_::import("numpy").attr("bool_")))
    raise_value_error(op, std::string(name) + " = " + std::string(py::repr(value)) +
                              " must be a bool, got " +
                              std::string(py::str(py::type::of(value).attr("__name__"))));
  return value.cast<bool>();
}

// A sequence of ints (list, tuple or 1-D integer array) of one of the allowed lengths.
inline std::vector<int64_t> require_int_list(const char* op, const char* name, const py::handle& obj,
                                             std::initializer_list<size_t> lengths) {
  const auto not_ints = [&] {
    raise_value_error(op, std::string(name) + " must be a sequence of ints, got " +
                              std::string(py::repr(obj)));
  };
  std::vector<int64_t> values;
  try {
    for (auto item : py::iter(obj)) {
      if (!is_int_object(item)) not_ints();
      values.push_back(item.cast<int64_t>());
    }
  } catch (const py::error_already_set&) {
    not_ints();
  } catch (const py::cast_error&) {
    raise_value_error(op, std::string(name) + " = " + std::string(py::repr(obj)) +
                              " has an element that does not fit in int64");
  }
  bool ok = lengths.size() == 0;
  std::string allowed;
  for (size_t n : lengths) {
    ok = ok || values.size() == n;
    allowed += (allowed.empty() ? "" : " or ") + std::to_string(n);
  }
  if (!ok)
    raise_value_error(op, std::string(name) + " has " + std::to_string(values.size()) +
                              " elements, must have " + allowed);
  return values;
}

// Per-channel int32 parameters given as a list or an integer array; values range-checked later
// by the kernel's prepare step.
inline std::vector<int32_t> require_int32_values(const char* op, const char* name,
                                                 const py::handle& obj) {
  std::vector<int32_t> out;
  for (int64_t v : require_int_list(op, name, obj, {})) {
    if (v < INT32_MIN || v > INT32_MAX)
      raise_value_error(op, std::string(name) + " value " + std::to_string(v) +
                                " does not fit in int32");
    out.push_back(static_cast<int32_t>(v));
  }
  return out;
}

}  // namespace cortexm::bindings

namespace pybind11::detail {

// Takes any object; require_int / require_int64 check it with the argument's name.
template <>
struct type_caster<cortexm::bindings::IntArg> {
  PYBIND11_TYPE_CASTER(cortexm::bindings::IntArg, const_name("int"));
  bool load(handle src, bool) {
    if (!src) return false;
    value.value = reinterpret_borrow<object>(src);
    return true;
  }
  static handle cast(const cortexm::bindings::IntArg& src, return_value_policy, handle) {
    return src.value.inc_ref();
  }
};

}  // namespace pybind11::detail
