// Python view of targets and passes: CortexMTargetConfig, run_pass, pass_names.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "passes/convert_to_cortex_m.h"
#include "passes/pass.h"

namespace cortexm::bindings {

namespace py = pybind11;

void bind_passes(py::module_& m) {
  py::class_<TargetConfig>(m, "CortexMTargetConfig",
                           "A Cortex-M core and the kernel ISA used on it (SCALAR, DSP or MVE).")
      .def(py::init([](const std::string& cpu, const py::object& isa) {
             return make_target(cpu, isa.is_none() ? "" : py::str(isa).cast<std::string>());
           }),
           py::arg("cpu"), py::arg("isa") = py::none())
      .def_static("from_string", &parse_target, py::arg("target"),
                  "Parses 'cortex-m55+int8' (optionally '+dsp', '+scalar' or '+mve').")
      .def_property_readonly("cpu", [](const TargetConfig& t) { return cpu_name(t.cpu); })
      .def_property_readonly("isa", [](const TargetConfig& t) { return isa_name(t.isa); })
      .def_property_readonly("supported_isas", [](const TargetConfig& t) {
        std::vector<std::string> names;
        for (Isa isa : supported_isas(t.cpu)) names.push_back(isa_name(isa));
        return names;
      })
      .def("__str__", &target_string)
      .def("__repr__", [](const TargetConfig& t) {
        return std::string("CortexMTargetConfig('") + cpu_name(t.cpu) + "', isa='" + isa_name(t.isa) + "')";
      })
      .def("__eq__", [](const TargetConfig& a, const TargetConfig& b) {
        return a.cpu == b.cpu && a.isa == b.isa;
      });
  m.def("cpu_names", &cpu_names);
  m.def("pass_names", [] {
    std::vector<std::string> names;
    for (const PassInfo& p : registered_passes()) names.push_back(p.name);
    return names;
  });
  m.def("default_passes", &default_pass_order,
        "Pass names of the default pipeline in the order they run (passes.def); a pass may repeat.");
  m.def("pass_summary", [](const std::string& name) { return find_pass(name).summary; });
  m.def("is_table_activation", &convert::is_table_activation, py::arg("op"),
        "True for the elementwise ops ConvertToCortexM lowers to a lookup table (quantized_activation).");
  m.def(
      "converters",
      [] {
        py::list out;
        for (const convert::Converter* c : convert::converters()) {
          py::dict d;
          d["ops"] = c->ops;
          d["folded_only"] = c->form == convert::Form::kFolded;
          out.append(d);
        }
        return out;
      },
      "ConvertToCortexM's converters in order, each {'ops': the graph ops it lowers, 'folded_only': whether "
      "it takes only their folded form (a compute op reading or producing quantized values)}.");
  m.def(
      "run_pass",
      [](const std::string& name, const std::shared_ptr<Graph>& graph, const TargetConfig& target) {
        return find_pass(name).run(*graph, target);
      },
      py::arg("name"), py::arg("graph"), py::arg("target"),
      "Runs one C++ pass in place; returns whether it changed the graph.");
}

}  // namespace cortexm::bindings
