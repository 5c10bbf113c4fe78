#include "bindings/numpy_args.h"
#include "cortexm/kernels/quantized_activation.h"

namespace cortexm::bindings {

void bind_quantized_activation(py::module_& ops) {
  ops.def(
      "quantized_activation",
      [](py::handle input, py::handle table) {
        constexpr const char* op = "quantized_activation";
        auto x = require_array<int8_t>(op, "input", input, 0, 32);
        auto t = require_array<int8_t>(op, "table", table, 1, 1);
        if (t.shape(0) != kActivationTableSize)
          raise_value_error(op, "table " + shape_string(t) + " must have 256 entries");
        ActivationParams p;
        p.count = static_cast<int64_t>(x.size());
        p.table = t.data();
        check(op, quantized_activation_prepare(p));
        py::array_t<int8_t> out(std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
        {
          py::gil_scoped_release release;
          quantized_activation(p, x.data(), out.mutable_data());
        }
        return out;
      },
      py::arg("input"), py::arg("table"),
      "int8 -> int8 through a 256-entry table: out = table[input + 128].");
}

}  // namespace cortexm::bindings
