#include "bindings/paths.h"

namespace cortexm::bindings {

std::string path_from_python(const py::handle& path, const std::string& what) {
  py::module_ os = py::module_::import("os");
  py::object text = py::reinterpret_borrow<py::object>(path);
  const bool path_like = !py::isinstance<py::str>(path) && !py::isinstance<py::bytes>(path) &&
                         py::hasattr(py::type::handle_of(path), "__fspath__");
  if (path_like) text = os.attr("fspath")(path);
  if (!py::isinstance<py::str>(text))
    throw py::type_error(what + " = " + std::string(py::repr(path)) + " must be a str or os.PathLike" +
                         (py::isinstance<py::bytes>(text) ? " (decode bytes with os.fsdecode)" : ""));
  std::string bytes = os.attr("fsencode")(text).cast<std::string>();
  if (bytes.find('\0') != std::string::npos)
    throw py::value_error(what + " = " + std::string(py::repr(text)) + " contains a NUL character");
  return bytes;
}

}  // namespace cortexm::bindings
