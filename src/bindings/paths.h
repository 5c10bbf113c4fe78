// File paths from Python: one check for every binding that takes a path.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace cortexm::bindings {

namespace py = pybind11;

// `path` as the file system's bytes (os.fsencode). A str or os.PathLike giving a str only: bytes,
// None and anything else raise TypeError, a NUL character ValueError; `what` ("Graph.save: path")
// names the argument.
std::string path_from_python(const py::handle& path, const std::string& what);

}  // namespace cortexm::bindings
