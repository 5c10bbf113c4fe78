#include "bindings/rows_args.h"
#include "cortexm/kernels/quantized_softmax.h"

namespace cortexm::bindings {

void bind_quantized_softmax(py::module_& ops) {
  ops.def(
      "softmax_scaling",
      [](double input_scale) {
        SoftmaxScaling s;
        check("softmax_scaling", softmax_scaling(input_scale, &s));
        return py::make_tuple(s.input_multiplier, s.input_left_shift, s.diff_min);
      },
      py::arg("input_scale"),
      "input scale -> (input_multiplier, input_shift, diff_min) for quantized_softmax "
      "(TFLite's PreprocessSoftmaxScaling, beta 1, 5 integer bits).");
  ops.def(
      "quantized_softmax",
      [](py::handle input, IntArg input_multiplier, IntArg input_shift, IntArg diff_min,
         IntArg dim) {
        constexpr const char* op = "quantized_softmax";
        auto x = require_array<int8_t>(op, "input", input, 1, 32);
        const RowLayout l = row_layout(op, x, require_int64(op, "dim", dim));
        SoftmaxParams p;
        p.rows = l.rows();
        p.row_size = static_cast<int32_t>(l.n);
        p.scaling.input_multiplier = require_int(op, "input_multiplier", input_multiplier, 0, INT32_MAX);
        p.scaling.input_left_shift = require_int(op, "input_shift", input_shift, 0, 31);
        p.scaling.diff_min = require_int(op, "diff_min", diff_min, INT32_MIN, 0);
        check(op, quantized_softmax_prepare(p));
        return run_rows(x, l, p, quantized_softmax);
      },
      py::arg("input"), py::arg("input_multiplier"), py::arg("input_shift"), py::arg("diff_min"),
      py::arg("dim") = -1,
      "int8 softmax along dim -> int8 at scale 1/256, zero point -128 (arm_softmax_s8 arithmetic).");
}

}  // namespace cortexm::bindings
