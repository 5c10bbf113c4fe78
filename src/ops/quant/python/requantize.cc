#include "bindings/requant_args.h"
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
        p.input_offset = -require_zero_point(op, "input_zero_point", input_zero_point);
        p.output_offset = require_zero_point(op, "output_zero_point", output_zero_point);
        p.multiplier = require_multiplier(op, "output_multiplier", output_multiplier);
        p.shift = require_shift(op, "output_shift", output_shift);
        require_activation_range<int8_t>(op, activation_min, activation_max, &p);
        check(op, requantize_tensor_prepare(p));
        py::array_t<int8_t> out = array_like<int8_t>(x);
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
