#include <string>
#include <vector>

#include "bindings/conv_args.h"
#include "cortexm/kernels/quantized_conv2d_s16.h"

namespace cortexm::bindings {

void bind_quantized_conv2d_s16(py::module_& ops) {
  ops.def(
      "quantized_conv2d_s16",
      [](py::handle input, py::handle weight, py::handle bias, py::handle stride,
         py::handle padding, py::handle dilation, py::handle requantize_multipliers,
         py::handle requantize_shifts, IntArg activation_min, IntArg activation_max) {
        constexpr const char* op = "quantized_conv2d_s16";
        py::array_t<int16_t, py::array::c_style> x;
        py::array_t<int8_t, py::array::c_style> w;
        py::array_t<int64_t, py::array::c_style> b;
        Conv2dS16Params p;
        p.input = require_nhwc(op, "input", input, &x);
        p.filter = require_nhwc(op, "weight", weight, &w);
        const int64_t* bias_data = nullptr;
        if (!bias.is_none()) {
          b = require_array<int64_t>(op, "bias", bias, 1, 1);
          if (b.shape(0) != p.filter.n)
            raise_value_error(op, "bias shape " + shape_string(b) + " must be (" +
                                      std::to_string(p.filter.n) + ",), one per output channel");
          bias_data = b.data();
        }
        p.geometry = require_conv_geometry(op, stride, padding, dilation);
        const auto multipliers =
            require_per_channel(op, "requantize_multipliers", requantize_multipliers, p.filter.n);
        const auto shifts =
            require_per_channel(op, "requantize_shifts", requantize_shifts, p.filter.n);
        p.multipliers = multipliers.data();
        p.shifts = shifts.data();
        p.activation_min = require_int(op, "activation_min", activation_min, -32768, 32767);
        p.activation_max = require_int(op, "activation_max", activation_max, -32768, 32767);
        p.output = quantized_conv2d_s16_output_dims(p);
        check(op, quantized_conv2d_s16_prepare(p));

        py::array_t<int16_t> out({p.output.n, p.output.h, p.output.w, p.output.c});
        std::vector<int32_t> scratch((quantized_conv2d_s16_scratch_size(p, Isa::kScalar) + 3) / 4);
        {
          py::gil_scoped_release release;
          quantized_conv2d_s16(p, x.data(), w.data(), bias_data, out.mutable_data(),
                               scratch.data());
        }
        return out;
      },
      py::arg("input"), py::arg("weight"), py::arg("bias"), py::arg("stride"),
      py::arg("padding"), py::arg("dilation"), py::arg("requantize_multipliers"),
      py::arg("requantize_shifts"), py::arg("activation_min") = -32768,
      py::arg("activation_max") = 32767,
      "int16 NHWC input [N, H, W, C_in] (zero point 0) * int8 OHWI weight [C_out, KH, KW, "
      "C_in / groups] + int64 bias -> int16 [N, OH, OW, C_out] (zero point 0), arm_convolve_s16 "
      "arithmetic: 64-bit sums, per-channel arm_nn_requantize_s64 with the multiplier reduced to "
      "16 bits (shifts in [-31, 7]). stride and dilation are (h, w); padding is (pad_h, pad_w) or "
      "(top, left, bottom, right); groups = C_in / weight.shape[3].");
}

}  // namespace cortexm::bindings
