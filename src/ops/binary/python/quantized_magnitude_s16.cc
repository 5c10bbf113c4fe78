#include <algorithm>
#include <string>
#include <vector>

#include "bindings/requant_args.h"
#include "cortexm/kernels/quantized_magnitude_s16.h"

namespace cortexm::bindings {

void bind_quantized_magnitude_s16(py::module_& ops) {
  ops.def(
      "quantized_magnitude_s16",
      [](py::handle real, py::handle imag, IntArg output_multiplier, IntArg output_shift,
         IntArg output_zero_point, py::handle output_dtype, py::handle activation_min,
         py::handle activation_max) {
        constexpr const char* op = "quantized_magnitude_s16";
        const auto re = require_array<int16_t>(op, "real", real, 0, 32);
        const auto im = require_array<int16_t>(op, "imag", imag, 0, 32);
        std::vector<py::ssize_t> shape(re.shape(), re.shape() + re.ndim());
        if (!std::equal(shape.begin(), shape.end(), im.shape(), im.shape() + im.ndim()) ||
            re.ndim() != im.ndim())
          raise_value_error(op, "imag shape " + shape_string(im) + " must equal real shape " +
                                    shape_string(re));
        const bool int8_output = !require_int16_output(op, output_dtype);
        const int64_t lo = int8_output ? -128 : -32768, hi = int8_output ? 127 : 32767;
        MagnitudeParams p;
        p.size = static_cast<int64_t>(re.size());
        p.int8_output = int8_output;
        p.multiplier = require_multiplier(op, "output_multiplier", output_multiplier);
        p.shift = require_shift(op, "output_shift", output_shift);
        p.output_offset = require_int(op, "output_zero_point", output_zero_point, lo, hi);
        p.activation_min = require_optional_int(op, "activation_min", activation_min, lo, lo, hi);
        p.activation_max = require_optional_int(op, "activation_max", activation_max, hi, lo, hi);
        check(op, quantized_magnitude_s16_prepare(p));
        py::array out = int8_output ? py::array(py::array_t<int8_t>(shape))
                                    : py::array(py::array_t<int16_t>(shape));
        {
          py::gil_scoped_release release;
          if (int8_output) {
            quantized_magnitude_s16(p, re.data(), im.data(), static_cast<int8_t*>(out.mutable_data()));
          } else {
            quantized_magnitude_s16(p, re.data(), im.data(), static_cast<int16_t*>(out.mutable_data()));
          }
        }
        return out;
      },
      py::arg("real"), py::arg("imag"), py::arg("output_multiplier"), py::arg("output_shift"),
      py::arg("output_zero_point") = 0, py::arg("output_dtype") = "int16",
      py::arg("activation_min") = py::none(), py::arg("activation_max") = py::none(),
      "|z| of int16 real and imaginary parts (one scale s_in, zero point 0) -> int8 or int16: "
      "round(sqrt((re^2 + im^2) * 2^30)) (|z| with 15 fraction bits, exact integer square root "
      "rounded to nearest), requantized by output_multiplier, output_shift = "
      "quantize_multiplier(s_in / (2**15 * s_out)), + output_zero_point, clamped to "
      "[activation_min, activation_max] (default: the output dtype's range).");
}

}  // namespace cortexm::bindings
