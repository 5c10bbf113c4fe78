// softmax and log_softmax along a dim of an int8 array: one runner over the rows (rows_args.h);
// each binding decodes its scaling, which its *_scaling helper computes from the input scale.
#include "ops/softmax/python/rows_args.h"
#include "cortexm/kernels/quantized_log_softmax.h"
#include "cortexm/kernels/quantized_softmax.h"

namespace cortexm::bindings {
namespace {

template <typename Params>
struct RowKernel {
  const char* name;
  Error (*prepare)(const Params&);
  void (*run)(const Params&, const int8_t*, int8_t*);
};

// input_multiplier, input_shift and diff_min, which both scalings have.
template <typename Scaling>
void require_exp_scaling(const char* op, const IntArg& input_multiplier, const IntArg& input_shift,
                         const IntArg& diff_min, Scaling* s) {
  s->input_multiplier = require_int(op, "input_multiplier", input_multiplier, 0, INT32_MAX);
  s->input_left_shift = require_int(op, "input_shift", input_shift, 0, 31);
  s->diff_min = require_int(op, "diff_min", diff_min, INT32_MIN, 0);
}

// Checks input and dim, lets `decode` fill the scaling, then prepares and runs over the rows.
template <typename Params, typename Decode>
py::array_t<int8_t> run_softmax(const RowKernel<Params>& kernel, py::handle input,
                                const IntArg& dim, Decode decode) {
  const char* op = kernel.name;
  auto x = require_array<int8_t>(op, "input", input, 1, 32);
  const RowLayout l = row_layout(op, x, require_int64(op, "dim", dim));
  Params p;
  p.rows = l.rows();
  p.row_size = static_cast<int32_t>(l.n);
  decode(op, &p.scaling);
  check(op, kernel.prepare(p));
  return run_rows(x, l, p, kernel.run);
}

}  // namespace

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
  const RowKernel<SoftmaxParams> kernel{"quantized_softmax", quantized_softmax_prepare,
                                        quantized_softmax};
  ops.def(
      kernel.name,
      [kernel](py::handle input, IntArg input_multiplier, IntArg input_shift, IntArg diff_min,
               IntArg dim) {
        return run_softmax(kernel, input, dim, [&](const char* op, SoftmaxScaling* s) {
          require_exp_scaling(op, input_multiplier, input_shift, diff_min, s);
        });
      },
      py::arg("input"), py::arg("input_multiplier"), py::arg("input_shift"), py::arg("diff_min"),
      py::arg("dim") = -1,
      "int8 softmax along dim -> int8 at scale 1/256, zero point -128 (arm_softmax_s8 arithmetic).");
}

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
  const RowKernel<LogSoftmaxParams> kernel{"quantized_log_softmax", quantized_log_softmax_prepare,
                                           quantized_log_softmax};
  ops.def(
      kernel.name,
      [kernel](py::handle input, IntArg input_multiplier, IntArg input_shift, IntArg diff_min,
               IntArg reverse_scaling_divisor, IntArg reverse_scaling_right_shift, IntArg dim) {
        return run_softmax(kernel, input, dim, [&](const char* op, LogSoftmaxScaling* s) {
          require_exp_scaling(op, input_multiplier, input_shift, diff_min, s);
          s->reverse_scaling_divisor =
              require_int(op, "reverse_scaling_divisor", reverse_scaling_divisor, 0, INT32_MAX);
          s->reverse_scaling_right_shift =
              require_int(op, "reverse_scaling_right_shift", reverse_scaling_right_shift, 0, 31);
        });
      },
      py::arg("input"), py::arg("input_multiplier"), py::arg("input_shift"), py::arg("diff_min"),
      py::arg("reverse_scaling_divisor"), py::arg("reverse_scaling_right_shift"),
      py::arg("dim") = -1,
      "int8 log_softmax along dim -> int8 at scale 16/256, zero point 127 (TFLite's int8 "
      "LogSoftmax arithmetic).");
}

}  // namespace cortexm::bindings
