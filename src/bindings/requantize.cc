#include <vector>

#include "bindings/numpy_args.h"
#include "cortexm/kernels/requantize_tensor.h"

namespace cortexm::bindings {

void bind_requantize(py::module_& ops) {
  ops.def(
      "requantize",
      [](py::handle input, IntArg input_zero_point, IntArg output_zero_point,
         IntArg output_multiplier, IntArg output_shift, IntArg activation_min,
         IntArg activation_max) {
        constexpr const char* op = "requantize";
        auto x = require_array<int8_t>(op, "input", input, 0, 32);
        RequantizeParams p;
        p.size = static_cast<int64_t>(x.size());
        p.input_offset = -require_int(op, "input_zero_point", input_zero_point, -128, 127);
        p.output_offset = require_int(op, "output_zero_point", output_zero_point, -128, 127);
        p.multiplier = require_int(op, "output_multiplier", output_multiplier, 0, INT32_MAX);
        p.shift = require_int(op, "output_shift", output_shift, -31, 30);
        p.activation_min = require_int(op, "activation_min", activation_min, -128, 127);
        p.activation_max = require_int(op, "activation_max", activation_max, -128, 127);
        check(op, requantize_tensor_prepare(p));
        std::vector<py::ssize_t> shape(x.shape(), x.shape() + x.ndim());
        py::array_t<int8_t> out(shape);
        {
          py::gil_scoped_release release;
          requantize_tensor(p, x.data(), out.mutable_data());
        }
        return out;
      },
      py::arg("input"), py::arg("input_zero_point"), py::arg("output_zero_point"),
      py::arg("output_multiplier"), py::arg("output_shift"), py::arg("activation_min") = -128,
      py::arg("activation_max") = 127,
      "int8 -> int8 at other qparams: clamp(requantize((x - input_zero_point) << 20, "
      "output_multiplier, output_shift) + output_zero_point), the multiplier for "
      "s_in / (2**20 * s_out).");
}

}  // namespace cortexm::bindings
