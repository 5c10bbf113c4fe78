#include "bindings/broadcast_args.h"
#include "cortexm/kernels/quantized_mul.h"

namespace cortexm::bindings {

void bind_quantized_mul(py::module_& ops) {
  ops.def(
      "quantized_mul",
      [](py::handle self, IntArg self_zero_point, py::handle other, IntArg other_zero_point,
         IntArg output_zero_point, IntArg output_multiplier, IntArg output_shift,
         IntArg activation_min, IntArg activation_max) {
        constexpr const char* op = "quantized_mul";
        auto a = require_array<int8_t>(op, "self", self, 0, kMaxBroadcastRank);
        auto b = require_array<int8_t>(op, "other", other, 0, kMaxBroadcastRank);
        MulParams p;
        p.lhs_offset = -require_int(op, "self_zero_point", self_zero_point, -128, 127);
        p.rhs_offset = -require_int(op, "other_zero_point", other_zero_point, -128, 127);
        p.output_offset = require_int(op, "output_zero_point", output_zero_point, -128, 127);
        p.output_multiplier = require_int(op, "output_multiplier", output_multiplier, 0, INT32_MAX);
        p.output_shift = require_int(op, "output_shift", output_shift, -31, 30);
        p.activation_min = require_int(op, "activation_min", activation_min, -128, 127);
        p.activation_max = require_int(op, "activation_max", activation_max, -128, 127);
        auto operands = broadcast_operands(op, a, b);
        p.shape = operands.shape;
        check(op, quantized_mul_prepare(p));
        py::array_t<int8_t> out(operands.output_shape);
        int8_t* out_data = out.mutable_data();
        {
          py::gil_scoped_release release;
          quantized_mul(p, a.data(), b.data(), out_data);
        }
        return out;
      },
      py::arg("self"), py::arg("self_zero_point"), py::arg("other"), py::arg("other_zero_point"),
      py::arg("output_zero_point"), py::arg("output_multiplier"), py::arg("output_shift"),
      py::arg("activation_min") = -128, py::arg("activation_max") = 127,
      "int8 * int8 -> int8 with numpy broadcasting (arm_elementwise_mul_s8 arithmetic).");
}

}  // namespace cortexm::bindings
