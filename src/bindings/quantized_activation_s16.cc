#include "bindings/numpy_args.h"
#include "cortexm/kernels/quantized_activation_s16.h"

namespace cortexm::bindings {

void bind_quantized_activation_s16(py::module_& ops) {
  ops.def(
      "quantized_activation_s16",
      [](py::handle input, py::handle table) {
        constexpr const char* op = "quantized_activation_s16";
        auto x = require_array<int16_t>(op, "input", input, 0, 32);
        auto t = require_array<int16_t>(op, "table", table, 1, 1);
        if (t.shape(0) != kActivationS16TableSize)
          raise_value_error(op, "table " + shape_string(t) + " must have 513 entries");
        ActivationS16Params p;
        p.count = static_cast<int64_t>(x.size());
        p.table = t.data();
        check(op, quantized_activation_s16_prepare(p));
        py::array_t<int16_t> out(std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
        {
          py::gil_scoped_release release;
          quantized_activation_s16(p, x.data(), out.mutable_data());
        }
        return out;
      },
      py::arg("input"), py::arg("table"),
      "int16 -> int16 through a 513-entry table with TFLite's interpolation: i = 256 + (x >> 7), "
      "out = table[i] + (((table[i + 1] - table[i]) * (x & 127) + 64) >> 7).");
}

}  // namespace cortexm::bindings
