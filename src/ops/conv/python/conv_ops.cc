// The convolution bindings (conv, 16x8 conv, depthwise, transpose): operands and per-channel
// requantize parameters are decoded once in conv_args.h and run by run_conv; each binding adds its
// geometry and offsets.
#include "ops/conv/python/conv_args.h"
#include "cortexm/kernels/quantized_conv2d.h"
#include "cortexm/kernels/quantized_conv2d_s16.h"
#include "cortexm/kernels/quantized_conv2d_s16w16.h"
#include "cortexm/kernels/quantized_depthwise_conv2d.h"
#include "cortexm/kernels/quantized_transpose_conv2d.h"

namespace cortexm::bindings {

void bind_quantized_conv2d(py::module_& ops) {
  ops.def(
      "quantized_conv2d",
      [](py::handle input, py::handle weight, py::handle bias, py::handle stride,
         py::handle padding, py::handle dilation, IntArg input_offset, IntArg output_offset,
         py::handle requantize_multipliers, py::handle requantize_shifts, IntArg activation_min,
         IntArg activation_max) {
        constexpr const char* op = "quantized_conv2d";
        const auto a = require_conv_operands<int8_t, int32_t>(
            op, input, weight, bias, ChannelDim::kN, requantize_multipliers, requantize_shifts);
        Conv2dParams p;
        p.input = a.input_dims;
        p.filter = a.filter_dims;
        p.geometry = require_conv_geometry(op, stride, padding, dilation);
        p.quant = require_conv_quant(op, input_offset, output_offset, a.multipliers, a.shifts,
                                     activation_min, activation_max);
        return run_conv<int8_t>(op, a, p, quantized_conv2d_output_dims, quantized_conv2d_prepare,
                                quantized_conv2d_scratch_size, quantized_conv2d);
      },
      py::arg("input"), py::arg("weight"), py::arg("bias"), py::arg("stride"),
      py::arg("padding"), py::arg("dilation"), py::arg("input_offset"), py::arg("output_offset"),
      py::arg("requantize_multipliers"), py::arg("requantize_shifts"),
      py::arg("activation_min") = qmin<int8_t>, py::arg("activation_max") = qmax<int8_t>,
      "int8 NHWC input [N, H, W, C_in] * int8 OHWI weight [C_out, KH, KW, C_in / groups] + int32 "
      "bias -> int8 [N, OH, OW, C_out], per-channel requantize (arm_convolve_s8 arithmetic). "
      "stride and dilation are (h, w); padding is (pad_h, pad_w) or (top, left, bottom, right); "
      "groups = C_in / weight.shape[3].");
}

namespace {

// The 16x8 (int8 weight) and 16x16 (int16 weight) convs: one binding over the kernel's Params,
// weight type W and entry points.
template <class Params, class W>
void def_conv_s16(py::module_& ops, const char* op, Dims4 (*output_dims)(const Params&),
                  Error (*prepare)(const Params&), size_t (*scratch_size)(const Params&, Isa),
                  void (*kernel)(const Params&, const int16_t*, const W*, const int64_t*, int16_t*,
                                 void*),
                  const char* doc) {
  ops.def(
      op,
      [=](py::handle input, py::handle weight, py::handle bias, py::handle stride,
          py::handle padding, py::handle dilation, py::handle requantize_multipliers,
          py::handle requantize_shifts, IntArg activation_min, IntArg activation_max) {
        const auto a = require_conv_operands<int16_t, int64_t, W>(
            op, input, weight, bias, ChannelDim::kN, requantize_multipliers, requantize_shifts);
        Params p;
        p.input = a.input_dims;
        p.filter = a.filter_dims;
        p.geometry = require_conv_geometry(op, stride, padding, dilation);
        p.multipliers = a.multipliers.data();
        p.shifts = a.shifts.data();
        require_activation_range<int16_t>(op, activation_min, activation_max, &p);
        return run_conv<int16_t>(op, a, p, output_dims, prepare, scratch_size, kernel);
      },
      py::arg("input"), py::arg("weight"), py::arg("bias"), py::arg("stride"),
      py::arg("padding"), py::arg("dilation"), py::arg("requantize_multipliers"),
      py::arg("requantize_shifts"), py::arg("activation_min") = qmin<int16_t>,
      py::arg("activation_max") = qmax<int16_t>, doc);
}

}  // namespace

void bind_quantized_conv2d_s16(py::module_& ops) {
  def_conv_s16<Conv2dS16Params, int8_t>(
      ops, "quantized_conv2d_s16", quantized_conv2d_s16_output_dims, quantized_conv2d_s16_prepare,
      quantized_conv2d_s16_scratch_size, quantized_conv2d_s16,
      "int16 NHWC input [N, H, W, C_in] (zero point 0) * int8 OHWI weight [C_out, KH, KW, "
      "C_in / groups] + int64 bias -> int16 [N, OH, OW, C_out] (zero point 0), arm_convolve_s16 "
      "arithmetic: 64-bit sums, per-channel arm_nn_requantize_s64 with the multiplier reduced to "
      "16 bits (shifts in [-31, 7]). stride and dilation are (h, w); padding is (pad_h, pad_w) or "
      "(top, left, bottom, right); groups = C_in / weight.shape[3].");
}

void bind_quantized_conv2d_s16w16(py::module_& ops) {
  def_conv_s16<Conv2dS16W16Params, int16_t>(
      ops, "quantized_conv2d_s16w16", quantized_conv2d_s16w16_output_dims,
      quantized_conv2d_s16w16_prepare, quantized_conv2d_s16w16_scratch_size, quantized_conv2d_s16w16,
      "16x16: int16 NHWC input [N, H, W, C_in] (zero point 0) * int16 OHWI weight [C_out, KH, KW, "
      "C_in / groups] (zero point 0) + int64 bias -> int16 [N, OH, OW, C_out] (zero point 0): "
      "64-bit sums, per-channel arm_nn_requantize_s64 with the multiplier reduced to 16 bits "
      "(shifts in [-31, 7]); at most 2^16 taps per output. stride and dilation are (h, w); padding "
      "is (pad_h, pad_w) or (top, left, bottom, right); groups = C_in / weight.shape[3].");
}

void bind_quantized_depthwise_conv2d(py::module_& ops) {
  ops.def(
      "quantized_depthwise_conv2d",
      [](py::handle input, py::handle weight, py::handle bias, py::handle stride,
         py::handle padding, py::handle dilation, IntArg depth_multiplier, IntArg input_offset,
         IntArg output_offset, py::handle requantize_multipliers, py::handle requantize_shifts,
         IntArg activation_min, IntArg activation_max) {
        constexpr const char* op = "quantized_depthwise_conv2d";
        const auto a = require_conv_operands<int8_t, int32_t>(
            op, input, weight, bias, ChannelDim::kC, requantize_multipliers, requantize_shifts);
        DepthwiseConv2dParams p;
        p.input = a.input_dims;
        p.filter = a.filter_dims;
        p.geometry = require_conv_geometry(op, stride, padding, dilation);
        p.depth_multiplier = require_int(op, "depth_multiplier", depth_multiplier, 1, INT32_MAX);
        p.quant = require_conv_quant(op, input_offset, output_offset, a.multipliers, a.shifts,
                                     activation_min, activation_max);
        return run_conv<int8_t>(op, a, p, quantized_depthwise_conv2d_output_dims,
                                quantized_depthwise_conv2d_prepare,
                                quantized_depthwise_conv2d_scratch_size,
                                quantized_depthwise_conv2d);
      },
      py::arg("input"), py::arg("weight"), py::arg("bias"), py::arg("stride"),
      py::arg("padding"), py::arg("dilation"), py::arg("depth_multiplier"),
      py::arg("input_offset"), py::arg("output_offset"), py::arg("requantize_multipliers"),
      py::arg("requantize_shifts"), py::arg("activation_min") = qmin<int8_t>,
      py::arg("activation_max") = qmax<int8_t>,
      "int8 NHWC input [N, H, W, C_in] depthwise with int8 weight [1, KH, KW, C_in * m] + int32 "
      "bias -> int8 [N, OH, OW, C_in * m]; output channel c * m + j reads input channel c "
      "(arm_depthwise_conv_s8 arithmetic). stride and dilation are (h, w); padding is "
      "(pad_h, pad_w) or (top, left, bottom, right).");
}

void bind_quantized_transpose_conv2d(py::module_& ops) {
  ops.def(
      "quantized_transpose_conv2d",
      [](py::handle input, py::handle weight, py::handle bias, py::handle stride,
         py::handle padding, py::handle output_padding, IntArg input_offset,
         IntArg output_offset, py::handle requantize_multipliers, py::handle requantize_shifts,
         IntArg activation_min, IntArg activation_max) {
        constexpr const char* op = "quantized_transpose_conv2d";
        const auto a = require_conv_operands<int8_t, int32_t>(
            op, input, weight, bias, ChannelDim::kN, requantize_multipliers, requantize_shifts);
        TransposeConv2dParams p;
        p.input = a.input_dims;
        p.filter = a.filter_dims;
        const ConvGeometry g = require_conv_geometry(op, stride, padding, py::make_tuple(1, 1));
        const auto out_pad = require_geometry_ints(op, "output_padding", output_padding, {2}, 0);
        p.stride_h = g.stride_h;
        p.stride_w = g.stride_w;
        p.padding = g.padding;
        p.output_padding_h = out_pad[0];
        p.output_padding_w = out_pad[1];
        p.quant = require_conv_quant(op, input_offset, output_offset, a.multipliers, a.shifts,
                                     activation_min, activation_max);
        return run_conv<int8_t>(op, a, p, quantized_transpose_conv2d_output_dims,
                                quantized_transpose_conv2d_prepare,
                                quantized_transpose_conv2d_scratch_size,
                                quantized_transpose_conv2d);
      },
      py::arg("input"), py::arg("weight"), py::arg("bias"), py::arg("stride"),
      py::arg("padding"), py::arg("output_padding"), py::arg("input_offset"),
      py::arg("output_offset"), py::arg("requantize_multipliers"), py::arg("requantize_shifts"),
      py::arg("activation_min") = qmin<int8_t>, py::arg("activation_max") = qmax<int8_t>,
      "transposed convolution: int8 NHWC input [N, H, W, C_in], int8 OHWI weight [C_out, KH, KW, "
      "C_in], int32 bias -> int8 [N, OH, OW, C_out], per-channel requantize (arm_transpose_conv_s8 "
      "arithmetic); groups 1, dilation 1; padding (pad_h, pad_w) or (top, left, bottom, right); "
      "output_padding (h, w) < stride.");
}

}  // namespace cortexm::bindings
