// cortexm._core: the compiled half of the cortexm package.
#include <pybind11/pybind11.h>

#include <limits>

#include "cortexm/kernels/host_variant.h"
#include "cortexm/kernels/requantize.h"
#include "bindings/paths.h"
#include "graph/errors.h"
#include "graph/serialize.h"
#include "runtime/program.h"

namespace py = pybind11;

namespace cortexm::bindings {
// Each op family's kernel bindings (src/ops/<family>/python/*.cc), from the generated list.
#define CORTEXM_KERNEL_BINDING(fn) void fn(py::module_& ops);
#include "bindings/kernel_bindings.inc"
#undef CORTEXM_KERNEL_BINDING
void bind_graph(py::module_& m);
void bind_passes(py::module_& m);
void bind_planner(py::module_& m);
void bind_program(py::module_& m);
}  // namespace cortexm::bindings

PYBIND11_MODULE(_core, m) {
  m.doc() = "cortexm native core: int8 Cortex-M kernels with CMSIS-NN arithmetic";
  py::register_exception<cortexm::GraphError>(m, "GraphError", PyExc_ValueError);
  py::register_exception<cortexm::UnsupportedError>(m, "UnsupportedError", PyExc_NotImplementedError);
  // OSError(errno, message, filename) picks the subclass: FileNotFoundError, PermissionError, ...
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const cortexm::FileError& e) {
      py::object error = py::reinterpret_borrow<py::object>(PyExc_OSError)(e.error_number(), e.what(), e.path());
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
    }
  });

  m.def(
      "write_file_atomically",
      [](const py::object& path, const py::bytes& data, const std::string& argument) {
        const std::string file = cortexm::bindings::path_from_python(path, argument);
        std::string bytes = data;
        py::gil_scoped_release release;
        cortexm::write_file_atomically(file, bytes);
      },
      py::arg("path"), py::arg("data"), py::arg("argument") = "write_file_atomically: path",
      "Writes data to path (str or os.PathLike) atomically: readers and a kill -9 see the old file or the "
      "whole new one. `argument` names the path in errors.");
  m.def(
      "read_program_file",
      [](const py::object& path) {
        const std::string file = cortexm::bindings::path_from_python(path, "load_program: path");
        std::string bytes;
        {
          py::gil_scoped_release release;
          bytes = cortexm::read_file(file, cortexm::runtime::kMaxProgramBytes, "program file");
        }
        return py::bytes(bytes);
      },
      py::arg("path"),
      "The bytes of a program file: a regular file of at most the 2^31 - 2 bytes the loader takes (OSError "
      "otherwise, before anything is read).");

  m.def(
      "quantize_multiplier",
      [](double scale) {
        if (!(scale >= 0.0) || scale == std::numeric_limits<double>::infinity())
          throw py::value_error("quantize_multiplier: scale = " + std::to_string(scale) +
                                " must be finite and >= 0");
        const auto q = cortexm::quantize_multiplier(scale);
        return py::make_tuple(q.multiplier, q.shift);
      },
      py::arg("scale"),
      "real scale -> (multiplier, shift), scale ~= multiplier * 2**(shift - 31) (TFLite rules).");

  m.def(
      "host_kernels", [] { return cortexm::host_variant_name(cortexm::host_variant()); },
      "The host kernels' x86 variant in use: 'scalar', 'avx2' or 'avx512vnni'.");
  m.def(
      "available_host_kernels",
      [] {
        py::list names;
        for (int v = 0; v <= static_cast<int>(cortexm::best_host_variant()); ++v)
          names.append(cortexm::host_variant_name(static_cast<cortexm::HostVariant>(v)));
        return names;
      },
      "The host kernel variants this CPU can run, scalar first.");
  m.def(
      "set_host_kernels",
      [](const std::string& name) {
        for (int v = 0; v <= 2; ++v) {
          const auto variant = static_cast<cortexm::HostVariant>(v);
          if (name != cortexm::host_variant_name(variant)) continue;
          if (!cortexm::set_host_variant(variant))
            throw py::value_error("set_host_kernels: variant = '" + name + "': this CPU runs at most '" +
                                  cortexm::host_variant_name(cortexm::best_host_variant()) + "'");
          return;
        }
        throw py::value_error("set_host_kernels: variant = '" + name +
                              "': must be 'scalar', 'avx2' or 'avx512vnni'");
      },
      py::arg("variant"),
      "Makes the host kernels run `variant` (every variant gives the same bytes); ValueError for one "
      "this CPU cannot run.");

  py::module_ ops = m.def_submodule("ops", "cortex_m int8 operators on numpy arrays");
#define CORTEXM_KERNEL_BINDING(fn) cortexm::bindings::fn(ops);
#include "bindings/kernel_bindings.inc"
#undef CORTEXM_KERNEL_BINDING

  cortexm::bindings::bind_graph(m);
  cortexm::bindings::bind_passes(m);
  cortexm::bindings::bind_planner(m);
  cortexm::bindings::bind_program(m);
}
