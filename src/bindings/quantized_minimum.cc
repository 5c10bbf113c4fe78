#include "bindings/broadcast_args.h"
#include "cortexm/kernels/quantized_minimum.h"

namespace cortexm::bindings {

void bind_quantized_minimum(py::module_& ops) {
  ops.def(
      "quantized_minimum",
      [](py::handle self, IntArg self_zero_point, IntArg self_multiplier, IntArg self_shift,
         py::handle other, IntArg other_zero_point, IntArg other_multiplier, IntArg other_shift,
         IntArg output_zero_point, IntArg output_multiplier, IntArg output_shift,
         IntArg activation_min, IntArg activation_max) {
        constexpr const char* op = "quantized_minimum";
        auto a = require_array<int8_t>(op, "self", self, 0, kMaxBroadcastRank);
        auto b = require_array<int8_t>(op, "other", other, 0, kMaxBroadcastRank);
        MinMaxParams p;
        p.lhs_offset = -require_int(op, "self_zero_point", self_zero_point, -128, 127);
        p.lhs_multiplier = require_int(op, "self_multiplier", self_multiplier, 0, INT32_MAX);
        p.lhs_shift = require_int(op, "self_shift", self_shift, -31, 30);
        p.rhs_offset = -require_int(op, "other_zero_point", other_zero_point, -128, 127);
        p.rhs_multiplier = require_int(op, "other_multiplier", other_multiplier, 0, INT32_MAX);
        p.rhs_shift = require_int(op, "other_shift", other_shift, -31, 30);
        p.output_offset = require_int(op, "output_zero_point", output_zero_point, -128, 127);
        p.output_multiplier = require_int(op, "output_multiplier", output_multiplier, 0, INT32_MAX);
        p.output_shift = require_int(op, "output_shift", output_shift, -31, 30);
        p.activation_min = require_int(op, "activation_min", activation_min, -128, 127);
        p.activation_max = require_int(op, "activation_max", activation_max, -128, 127);
        auto operands = broadcast_operands(op, a, b);
        p.shape = operands.shape;
        check(op, quantized_minimum_prepare(p));
        py::array_t<int8_t> out(operands.output_shape);
        {
          py::gil_scoped_release release;
          quantized_minimum(p, a.data(), b.data(), out.mutable_data());
        }
        return out;
      },
      py::arg("self"), py::arg("self_zero_point"), py::arg("self_multiplier"),
      py::arg("self_shift"), py::arg("other"), py::arg("other_zero_point"),
      py::arg("other_multiplier"), py::arg("other_shift"), py::arg("output_zero_point"),
      py::arg("output_multiplier"), py::arg("output_shift"), py::arg("activation_min") = -128,
      py::arg("activation_max") = 127,
      "elementwise minimum of int8 tensors with numpy broadcasting; inputs rescaled as in "
      "quantized_add (left shift 20, common scale), the winner requantized to the output.");
}

}  // namespace cortexm::bindings
