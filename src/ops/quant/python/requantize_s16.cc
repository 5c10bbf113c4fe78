#include <string>
#include <vector>

#include "bindings/requant_args.h"
#include "cortexm/kernels/requantize_s16.h"

namespace cortexm::bindings {

void bind_requantize_s16(py::module_& ops) {
  ops.def(
      "requantize_s16",
      [](py::handle input, IntArg input_zero_point, IntArg output_zero_point,
         IntArg output_multiplier, IntArg output_shift, py::handle output_dtype,
         py::handle activation_min, py::handle activation_max) {
        constexpr const char* op = "requantize_s16";
        if (!py::isinstance<py::array>(input))
          raise_value_error(op, "input must be a numpy array, got " +
                                    std::string(py::str(py::type::of(input).attr("__name__"))));
        const auto in_dtype = py::reinterpret_borrow<py::array>(input).dtype();
        const bool int16_input = in_dtype.is(py::dtype::of<int16_t>());
        if (!int16_input && !in_dtype.is(py::dtype::of<int8_t>()))
          raise_value_error(op, "input dtype " + std::string(py::str(in_dtype)) +
                                    " must be int8 or int16");
        const bool int16_output = require_int16_output(op, output_dtype);
        if (!int16_input && !int16_output)
          raise_value_error(op, "int8 input and int8 output_dtype: use cortexm.ops.requantize");
        const int64_t lo = int16_output ? -32768 : -128, hi = int16_output ? 32767 : 127;
        RequantizeS16Params p;
        p.int16_input = int16_input;
        p.int16_output = int16_output;
        p.input_offset = -(int16_input ? require_int(op, "input_zero_point", input_zero_point, 0, 0)
                                       : require_int(op, "input_zero_point", input_zero_point,
                                                     -128, 127));
        p.output_offset = require_int(op, "output_zero_point", output_zero_point, lo, hi);
        p.multiplier = require_multiplier(op, "output_multiplier", output_multiplier);
        p.shift = require_shift(op, "output_shift", output_shift);
        p.activation_min = require_optional_int(op, "activation_min", activation_min, lo, lo, hi);
        p.activation_max = require_optional_int(op, "activation_max", activation_max, hi, lo, hi);

        py::array in = int16_input ? py::array(require_array<int16_t>(op, "input", input, 0, 32))
                                   : py::array(require_array<int8_t>(op, "input", input, 0, 32));
        p.size = static_cast<int64_t>(in.size());
        check(op, requantize_s16_prepare(p));
        std::vector<py::ssize_t> shape(in.shape(), in.shape() + in.ndim());
        py::array out = int16_output ? py::array(py::array_t<int16_t>(shape))
                                     : py::array(py::array_t<int8_t>(shape));
        {
          py::gil_scoped_release release;
          if (!int16_input) {
            requantize_s16(p, static_cast<const int8_t*>(in.data()),
                           static_cast<int16_t*>(out.mutable_data()));
          } else if (int16_output) {
            requantize_s16(p, static_cast<const int16_t*>(in.data()),
                           static_cast<int16_t*>(out.mutable_data()));
          } else {
            requantize_s16(p, static_cast<const int16_t*>(in.data()),
                           static_cast<int8_t*>(out.mutable_data()));
          }
        }
        return out;
      },
      py::arg("input"), py::arg("input_zero_point"), py::arg("output_zero_point"),
      py::arg("output_multiplier"), py::arg("output_shift"), py::arg("output_dtype"),
      py::arg("activation_min") = py::none(), py::arg("activation_max") = py::none(),
      "Requantize with int16 on either side (int16 -> int8, int8 -> int16, int16 -> int16): "
      "clamp(requantize((x - input_zero_point) << left, output_multiplier, output_shift) + "
      "output_zero_point), left = 15 for int16 input (zero point 0) and 20 for int8 input, the "
      "multiplier for s_in / (2**left * s_out); the clamp defaults to the output dtype's range.");
}

}  // namespace cortexm::bindings
