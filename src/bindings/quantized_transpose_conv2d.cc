#include <vector>

#include "bindings/conv_args.h"
#include "cortexm/kernels/quantized_transpose_conv2d.h"

namespace cortexm::bindings {

void bind_quantized_transpose_conv2d(py::module_& ops) {
  ops.def(
      "quantized_transpose_conv2d",
      [](py::handle input, py::handle weight, py::handle bias, py::handle stride,
         py::handle padding, py::handle output_padding, IntArg input_offset,
         IntArg output_offset, py::handle requantize_multipliers, py::handle requantize_shifts,
         IntArg activation_min, IntArg activation_max) {
        constexpr const char* op = "quantized_transpose_conv2d";
        py::array_t<int8_t, py::array::c_style> x, w;
        py::array_t<int32_t, py::array::c_style> b;
        TransposeConv2dParams p;
        p.input = require_nhwc(op, "input", input, &x);
        p.filter = require_nhwc(op, "weight", weight, &w);
        const int32_t* bias_data = require_bias(op, bias, p.filter.n, &b);
        const ConvGeometry g =
            require_conv_geometry(op, stride, padding, py::make_tuple(1, 1));
        const auto out_pad = require_geometry_ints(op, "output_padding", output_padding, {2}, 0);
        p.stride_h = g.stride_h;
        p.stride_w = g.stride_w;
        p.padding = g.padding;
        p.output_padding_h = out_pad[0];
        p.output_padding_w = out_pad[1];
        const auto multipliers =
            require_per_channel(op, "requantize_multipliers", requantize_multipliers, p.filter.n);
        const auto shifts =
            require_per_channel(op, "requantize_shifts", requantize_shifts, p.filter.n);
        p.quant = require_conv_quant(op, input_offset, output_offset, multipliers, shifts,
                                     activation_min, activation_max);
        p.output = quantized_transpose_conv2d_output_dims(p);
        check(op, quantized_transpose_conv2d_prepare(p));
        py::array_t<int8_t> out({p.output.n, p.output.h, p.output.w, p.output.c});
        std::vector<int32_t> scratch(
            quantized_transpose_conv2d_scratch_size(p, Isa::kScalar) / sizeof(int32_t) + 1);
        {
          py::gil_scoped_release release;
          quantized_transpose_conv2d(p, x.data(), w.data(), bias_data, out.mutable_data(),
                                     scratch.data());
        }
        return out;
      },
      py::arg("input"), py::arg("weight"), py::arg("bias"), py::arg("stride"),
      py::arg("padding"), py::arg("output_padding"), py::arg("input_offset"),
      py::arg("output_offset"), py::arg("requantize_multipliers"), py::arg("requantize_shifts"),
      py::arg("activation_min") = -128, py::arg("activation_max") = 127,
      "transposed convolution: int8 NHWC input [N, H, W, C_in], int8 OHWI weight [C_out, KH, KW, "
      "C_in], int32 bias -> int8 [N, OH, OW, C_out], per-channel requantize (arm_transpose_conv_s8 "
      "arithmetic); groups 1, dilation 1; padding (pad_h, pad_w) or (top, left, bottom, right); "
      "output_padding (h, w) < stride.");
}

}  // namespace cortexm::bindings
