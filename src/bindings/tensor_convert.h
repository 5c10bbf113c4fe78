// numpy <-> Tensor conversion for the graph bindings (copies; dtypes map one to one).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "graph/tensor.h"

namespace cortexm::bindings {

namespace py = pybind11;

py::dtype numpy_dtype(DType dtype);
DType dtype_from_numpy(const py::dtype& dtype, const std::string& what);
// Accepts a numpy array (or anything np.asarray takes, e.g. a torch tensor on the CPU).
Tensor tensor_from_python(const py::handle& obj, const std::string& what);
// The two steps of tensor_from_python, for a caller that checks the array before it is copied:
// np.asarray(obj) (no copy of an array), then the copy into a tensor.
py::array array_from_python(const py::handle& obj, const std::string& what);
Tensor tensor_from_array(const py::array& array, const std::string& what);
py::array tensor_to_numpy(const Tensor& tensor);
// A dtype given as a string, numpy dtype or type, or torch dtype.
DType dtype_from_python(const py::handle& obj);

}  // namespace cortexm::bindings
