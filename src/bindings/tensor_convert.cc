#include "bindings/tensor_convert.h"

#include <cstring>

#include "graph/errors.h"

namespace cortexm::bindings {

py::dtype numpy_dtype(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return py::dtype::of<float>();
    case DType::kInt8: return py::dtype::of<int8_t>();
    case DType::kUInt8: return py::dtype::of<uint8_t>();
    case DType::kInt16: return py::dtype::of<int16_t>();
    case DType::kInt32: return py::dtype::of<int32_t>();
    case DType::kInt64: return py::dtype::of<int64_t>();
    case DType::kBool: return py::dtype::of<bool>();
  }
  throw GraphError("unknown dtype");
}

DType dtype_from_numpy(const py::dtype& dtype, const std::string& what) {
  for (DType d : {DType::kFloat32, DType::kInt8, DType::kUInt8, DType::kInt16, DType::kInt32,
                  DType::kInt64, DType::kBool})
    if (dtype.is(numpy_dtype(d))) return d;
  throw GraphError(what + " has dtype " + std::string(py::str(dtype)) +
                   ", cortexm takes float32, int8, uint8, int16, int32, int64 or bool");
}

DType dtype_from_python(const py::handle& obj) {
  if (py::isinstance<py::str>(obj)) return parse_dtype(obj.cast<std::string>());
  py::module_ np = py::module_::import("numpy");
  try {
    return dtype_from_numpy(py::reinterpret_borrow<py::dtype>(np.attr("dtype")(obj)), "dtype");
  } catch (const py::error_already_set&) {
    return parse_dtype(py::str(obj).cast<std::string>());  // torch.int8 -> "torch.int8"
  }
}

py::array array_from_python(const py::handle& obj, const std::string& what) {
  try {
    return py::module_::import("numpy").attr("asarray")(obj);
  } catch (const py::error_already_set& e) {
    throw GraphError(what + " cannot be read as an array: " + std::string(e.what()));
  }
}

Tensor tensor_from_array(const py::array& array, const std::string& what) {
  TensorInfo info;
  info.dtype = dtype_from_numpy(array.dtype(), what);
  for (py::ssize_t i = 0; i < array.ndim(); ++i) info.shape.push_back(array.shape(i));
  const py::array contiguous = py::module_::import("numpy").attr("asarray")(array, py::arg("order") = "C");
  Tensor t(info);
  if (t.nbytes()) std::memcpy(t.raw(), contiguous.data(), t.nbytes());
  return t;
}

Tensor tensor_from_python(const py::handle& obj, const std::string& what) {
  return tensor_from_array(array_from_python(obj, what), what);
}

py::array tensor_to_numpy(const Tensor& tensor) {
  std::vector<py::ssize_t> shape(tensor.shape().begin(), tensor.shape().end());
  py::array out(numpy_dtype(tensor.dtype()), shape);
  if (tensor.nbytes()) std::memcpy(out.mutable_data(), tensor.raw(), tensor.nbytes());
  return out;
}

}  // namespace cortexm::bindings
