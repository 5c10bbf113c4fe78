#include <cmath>
#include <string>

#include "bindings/quantize_args.h"

namespace cortexm::bindings {

void bind_quantize_per_tensor(py::module_& ops) {
  ops.def(
      "quantize_per_tensor",
      [](py::handle input, double scale, IntArg zero_point, IntArg quant_min,
         IntArg quant_max, py::handle dtype) {
        constexpr const char* op = "quantize_per_tensor";
        auto x = require_array<float>(op, "input", input, 0, 32);
        const QuantizeParams p =
            quantize_params(op, scale, zero_point, quant_min, quant_max, dtype);
        std::vector<py::ssize_t> shape(x.shape(), x.shape() + x.ndim());
        py::array out = p.dtype == QuantDtype::kInt8 ? py::array(py::array_t<int8_t>(shape))
                                                     : py::array(py::array_t<int16_t>(shape));
        const size_t count = static_cast<size_t>(x.size());
        void* out_data = out.mutable_data();
        {
          py::gil_scoped_release release;
          quantize_per_tensor(p, x.data(), out_data, count);
        }
        return out;
      },
      py::arg("input"), py::arg("scale"), py::arg("zero_point"), py::arg("quant_min"),
      py::arg("quant_max"), py::arg("dtype"),
      "float32 -> int8/int16: clamp(zero_point + round_half_even(x * (1.0f / scale)), quant_min, "
      "quant_max) in float32 math, as quantized_decomposed.quantize_per_tensor. NaN maps to "
      "zero_point (clamped).");
}

}  // namespace cortexm::bindings
