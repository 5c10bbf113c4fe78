#include "bindings/broadcast_args.h"
#include "cortexm/kernels/quantized_add_s16.h"

namespace cortexm::bindings {

void bind_quantized_add_s16(py::module_& ops) {
  ops.def(
      "quantized_add_s16",
      [](py::handle self, IntArg self_multiplier, IntArg self_shift, py::handle other,
         IntArg other_multiplier, IntArg other_shift, IntArg output_multiplier, IntArg output_shift,
         IntArg activation_min, IntArg activation_max) {
        constexpr const char* op = "quantized_add_s16";
        auto a = require_array<int16_t>(op, "self", self, 0, kMaxBroadcastRank);
        auto b = require_array<int16_t>(op, "other", other, 0, kMaxBroadcastRank);
        AddS16Params p;
        p.lhs_multiplier = require_int(op, "self_multiplier", self_multiplier, 0, INT32_MAX);
        p.lhs_shift = require_int(op, "self_shift", self_shift, -31, 30);
        p.rhs_multiplier = require_int(op, "other_multiplier", other_multiplier, 0, INT32_MAX);
        p.rhs_shift = require_int(op, "other_shift", other_shift, -31, 30);
        p.output_multiplier = require_int(op, "output_multiplier", output_multiplier, 0, INT32_MAX);
        p.output_shift = require_int(op, "output_shift", output_shift, -31, 30);
        p.activation_min = require_int(op, "activation_min", activation_min, -32768, 32767);
        p.activation_max = require_int(op, "activation_max", activation_max, -32768, 32767);
        auto operands = broadcast_operands(op, a, b);
        p.shape = operands.shape;
        check(op, quantized_add_s16_prepare(p));
        py::array_t<int16_t> out(operands.output_shape);
        int16_t* out_data = out.mutable_data();
        {
          py::gil_scoped_release release;
          quantized_add_s16(p, a.data(), b.data(), out_data);
        }
        return out;
      },
      py::arg("self"), py::arg("self_multiplier"), py::arg("self_shift"), py::arg("other"),
      py::arg("other_multiplier"), py::arg("other_shift"), py::arg("output_multiplier"),
      py::arg("output_shift"), py::arg("activation_min") = -32768,
      py::arg("activation_max") = 32767,
      "int16 + int16 -> int16, symmetric (zero point 0), with numpy broadcasting "
      "(arm_elementwise_add_s16 arithmetic: each input << 15 and rescaled, summed, rescaled).");
}

}  // namespace cortexm::bindings
