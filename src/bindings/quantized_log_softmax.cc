#include "bindings/rows_args.h"
#include "cortexm/kernels/quantized_log_softmax.h"

namespace cortexm::bindings {

void bind_quantized_log_softmax(py::module_& ops) {
  ops.def(
      "log_softmax_scaling",
      [](double input_scale) {
        LogSoftmaxScaling s;
        check("log_softmax_scaling", log_softmax_scaling(input_scale, &s));
        return py::make_tuple(s.input_multiplier, s.input_left_shift, s.diff_min,
                              s.reverse_scaling_divisor, s.reverse_scaling_right_shift);
      },
      py::arg("input_scale"),
      "input scale -> (input_multiplier, input_shift, diff_min, reverse_scaling_divisor, "
      "reverse_scaling_right_shift) for quantized_log_softmax (TFLite's "
      "PreprocessLogSoftmaxScalingExp, beta 1, 5 integer bits).");
  ops.def(
      "quantized_log_softmax",
      [](py::handle input, IntArg input_multiplier, IntArg input_shift, IntArg diff_min,
         IntArg reverse_scaling_divisor, IntArg reverse_scaling_right_shift, IntArg dim) {
        constexpr const char* op = "quantized_log_softmax";
        auto x = require_array<int8_t>(op, "input", input, 1, 32);
        const RowLayout l = row_layout(op, x, require_int64(op, "dim", dim));
        LogSoftmaxParams p;
        p.rows = l.rows();
        p.row_size = static_cast<int32_t>(l.n);
        LogSoftmaxScaling& s = p.scaling;
        s.input_multiplier = require_int(op, "input_multiplier", input_multiplier, 0, INT32_MAX);
        s.input_left_shift = require_int(op, "input_shift", input_shift, 0, 31);
        s.diff_min = require_int(op, "diff_min", diff_min, INT32_MIN, 0);
        s.reverse_scaling_divisor =
            require_int(op, "reverse_scaling_divisor", reverse_scaling_divisor, 0, INT32_MAX);
        s.reverse_scaling_right_shift =
            require_int(op, "reverse_scaling_right_shift", reverse_scaling_right_shift, 0, 31);
        check(op, quantized_log_softmax_prepare(p));
        return run_rows(x, l, p, quantized_log_softmax);
      },
      py::arg("input"), py::arg("input_multiplier"), py::arg("input_shift"), py::arg("diff_min"),
      py::arg("reverse_scaling_divisor"), py::arg("reverse_scaling_right_shift"),
      py::arg("dim") = -1,
      "int8 log_softmax along dim -> int8 at scale 16/256, zero point 127 (TFLite's int8 "
      "LogSoftmax arithmetic).");
}

}  // namespace cortexm::bindings
