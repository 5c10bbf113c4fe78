// The linear bindings, int8 and 16x8: shapes, bias and requantize parameters are checked once in
// linear_args.h; each binding adds its offsets and activation range.
#include "ops/linear/python/linear_args.h"
#include "cortexm/kernels/quantized_linear.h"
#include "cortexm/kernels/quantized_linear_s16.h"
#include "cortexm/kernels/quantized_linear_s16w16.h"

namespace cortexm::bindings {

void bind_quantized_linear(py::module_& ops) {
  ops.def(
      "quantized_linear",
      [](py::handle input, py::handle weights, py::handle bias, IntArg input_offset,
         IntArg filter_offset, IntArg output_offset, py::handle requantize_multipliers,
         py::handle requantize_shifts, IntArg activation_min, IntArg activation_max) {
        constexpr const char* op = "quantized_linear";
        const auto a = require_linear_operands<int8_t, int32_t>(
            op, input, weights, bias, requantize_multipliers, requantize_shifts);
        LinearParams p;
        a.fill(&p);
        p.input_offset = require_int(op, "input_offset", input_offset, -127, 128);
        p.filter_offset = require_int(op, "filter_offset", filter_offset, -127, 128);
        p.output_offset = require_zero_point(op, "output_offset", output_offset);
        require_activation_range<int8_t>(op, activation_min, activation_max, &p);
        return run_weighted<int8_t>(op, a, p, quantized_linear_prepare,
                                    quantized_linear_scratch_size, quantized_linear,
                                    a.output_shape());
      },
      py::arg("input"), py::arg("weights"), py::arg("bias"), py::arg("input_offset"),
      py::arg("filter_offset"), py::arg("output_offset"), py::arg("requantize_multipliers"),
      py::arg("requantize_shifts"), py::arg("activation_min") = qmin<int8_t>,
      py::arg("activation_max") = qmax<int8_t>,
      "int8 [..., K] x int8 [C_out, K]^T + int32 bias -> int8 [..., C_out], per-tensor or "
      "per-channel requantize (arm_fully_connected_s8 arithmetic).");
}

namespace {

// The 16x8 (int8 weights) and 16x16 (int16 weights) linears: one binding over the kernel's Params,
// weight type W and entry points.
template <class Params, class W>
void def_linear_s16(py::module_& ops, const char* op, Error (*prepare)(const Params&),
                    size_t (*scratch_size)(const Params&, Isa),
                    void (*kernel)(const Params&, const int16_t*, const W*, const int64_t*, int16_t*,
                                   void*),
                    const char* doc) {
  ops.def(
      op,
      [=](py::handle input, py::handle weights, py::handle bias, py::handle requantize_multipliers,
          py::handle requantize_shifts, IntArg activation_min, IntArg activation_max) {
        const auto a = require_linear_operands<int16_t, int64_t, W>(
            op, input, weights, bias, requantize_multipliers, requantize_shifts);
        Params p;
        a.fill(&p);
        require_activation_range<int16_t>(op, activation_min, activation_max, &p);
        return run_weighted<int16_t>(op, a, p, prepare, scratch_size, kernel, a.output_shape());
      },
      py::arg("input"), py::arg("weights"), py::arg("bias"), py::arg("requantize_multipliers"),
      py::arg("requantize_shifts"), py::arg("activation_min") = qmin<int16_t>,
      py::arg("activation_max") = qmax<int16_t>, doc);
}

}  // namespace

void bind_quantized_linear_s16(py::module_& ops) {
  def_linear_s16<LinearS16Params, int8_t>(
      ops, "quantized_linear_s16", quantized_linear_s16_prepare, quantized_linear_s16_scratch_size,
      quantized_linear_s16,
      "int16 [..., K] (zero point 0) x int8 [C_out, K]^T (zero point 0) + int64 bias -> int16 "
      "[..., C_out] (zero point 0), arm_fully_connected_s16 arithmetic: 64-bit sums, per-tensor "
      "or per-channel arm_nn_requantize_s64 with the multiplier reduced to 16 bits (shifts in "
      "[-31, 7]).");
}

void bind_quantized_linear_s16w16(py::module_& ops) {
  def_linear_s16<LinearS16W16Params, int16_t>(
      ops, "quantized_linear_s16w16", quantized_linear_s16w16_prepare,
      quantized_linear_s16w16_scratch_size, quantized_linear_s16w16,
      "16x16: int16 [..., K] (zero point 0) x int16 [C_out, K]^T (zero point 0) + int64 bias -> "
      "int16 [..., C_out] (zero point 0): 64-bit sums, per-tensor or per-channel "
      "arm_nn_requantize_s64 with the multiplier reduced to 16 bits (shifts in [-31, 7]); "
      "K <= 2^16.");
}

}  // namespace cortexm::bindings
