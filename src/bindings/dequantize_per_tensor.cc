#include <string>

#include "bindings/quantize_args.h"

namespace cortexm::bindings {

void bind_dequantize_per_tensor(py::module_& ops) {
  ops.def(
      "dequantize_per_tensor",
      [](py::handle input, double scale, IntArg zero_point, IntArg quant_min,
         IntArg quant_max, py::handle dtype) {
        constexpr const char* op = "dequantize_per_tensor";
        if (!py::isinstance<py::array>(input))
          raise_value_error(op, "input must be a numpy array, got " +
                                    std::string(py::str(py::type::of(input).attr("__name__"))));
        const py::dtype input_dtype = py::reinterpret_borrow<py::array>(input).dtype();
        const bool input_is_int8 = input_dtype.equal(py::dtype::of<int8_t>());
        if (!input_is_int8 && !input_dtype.equal(py::dtype::of<int16_t>()))
          raise_value_error(op, "input dtype " + std::string(py::str(input_dtype)) +
                                    " must be int8 or int16");
        const QuantizeParams p =
            quantize_params(op, scale, zero_point, quant_min, quant_max, dtype);
        if ((p.dtype == QuantDtype::kInt8) != input_is_int8)
          raise_value_error(op, std::string("dtype = ") +
                                    (p.dtype == QuantDtype::kInt8 ? "int8" : "int16") +
                                    " must match input dtype " +
                                    std::string(py::str(input_dtype)));
        py::array q;
        if (input_is_int8)
          q = require_array<int8_t>(op, "input", input, 0, 32);
        else
          q = require_array<int16_t>(op, "input", input, 0, 32);
        std::vector<py::ssize_t> shape(q.shape(), q.shape() + q.ndim());
        py::array_t<float> out(shape);
        const size_t count = static_cast<size_t>(q.size());
        const void* in_data = q.data();
        float* out_data = out.mutable_data();
        {
          py::gil_scoped_release release;
          dequantize_per_tensor(p, in_data, out_data, count);
        }
        return out;
      },
      py::arg("input"), py::arg("scale"), py::arg("zero_point"), py::arg("quant_min"),
      py::arg("quant_max"), py::arg("dtype"),
      "int8/int16 -> float32: (q - zero_point) * scale in float32 math. dtype must be the "
      "input's dtype.");
}

}  // namespace cortexm::bindings
