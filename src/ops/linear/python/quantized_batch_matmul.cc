#include "bindings/requant_args.h"
#include "cortexm/kernels/quantized_batch_matmul.h"

namespace cortexm::bindings {

void bind_quantized_batch_matmul(py::module_& ops) {
  ops.def(
      "quantized_batch_matmul",
      [](py::handle lhs, py::handle rhs, IntArg lhs_offset, IntArg rhs_offset,
         IntArg output_offset, IntArg output_multiplier, IntArg output_shift,
         IntArg activation_min, IntArg activation_max) {
        constexpr const char* op = "quantized_batch_matmul";
        auto a = require_array<int8_t>(op, "lhs", lhs, 3, 3);
        auto b = require_array<int8_t>(op, "rhs", rhs, 3, 3);
        for (int d = 0; d < 3; ++d)
          if (a.shape(d) > INT32_MAX || b.shape(d) > INT32_MAX)
            raise_value_error(op, "lhs " + shape_string(a) + " and rhs " + shape_string(b) +
                                      " must have extents below 2^31");
        if (a.shape(0) != b.shape(0))
          raise_value_error(op, "lhs " + shape_string(a) + " and rhs " + shape_string(b) +
                                    " must have the same batch");
        if (a.shape(2) != b.shape(2))
          raise_value_error(op, "lhs " + shape_string(a) + " and rhs " + shape_string(b) +
                                    " must have the same last dim K (rhs is [B, N, K])");
        BatchMatmulParams p;
        p.batch = static_cast<int32_t>(a.shape(0));
        p.lhs_rows = static_cast<int32_t>(a.shape(1));
        p.rhs_rows = static_cast<int32_t>(b.shape(1));
        p.cols = static_cast<int32_t>(a.shape(2));
        p.lhs_offset = require_int(op, "lhs_offset", lhs_offset, -127, 128);
        p.rhs_offset = require_int(op, "rhs_offset", rhs_offset, -127, 128);
        p.output_offset = require_zero_point(op, "output_offset", output_offset);
        p.multiplier = require_multiplier(op, "output_multiplier", output_multiplier);
        p.shift = require_shift(op, "output_shift", output_shift);
        require_activation_range<int8_t>(op, activation_min, activation_max, &p);
        check(op, quantized_batch_matmul_prepare(p));
        py::array_t<int8_t> out({a.shape(0), a.shape(1), b.shape(1)});
        const int8_t *lhs_data = a.data(), *rhs_data = b.data();
        int8_t* out_data = out.mutable_data();
        run_released(quantized_batch_matmul_scratch_size(p, Isa::kScalar), [&](void* scratch) {
          quantized_batch_matmul(p, lhs_data, rhs_data, out_data, scratch);
        });
        return out;
      },
      py::arg("lhs"), py::arg("rhs"), py::arg("lhs_offset"), py::arg("rhs_offset"),
      py::arg("output_offset"), py::arg("output_multiplier"), py::arg("output_shift"),
      py::arg("activation_min") = -128, py::arg("activation_max") = 127,
      "int8 lhs [B, M, K] x int8 rhs [B, N, K] (rhs transposed) -> int8 [B, M, N], per-tensor "
      "requantize (arm_batch_matmul_s8 arithmetic); offsets are minus the zero points.");
}

}  // namespace cortexm::bindings
