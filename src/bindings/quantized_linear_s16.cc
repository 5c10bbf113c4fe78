#include <vector>

#include "bindings/numpy_args.h"
#include "cortexm/kernels/quantized_linear_s16.h"

namespace cortexm::bindings {

void bind_quantized_linear_s16(py::module_& ops) {
  ops.def(
      "quantized_linear_s16",
      [](py::handle input, py::handle weights, py::handle bias, py::handle requantize_multipliers,
         py::handle requantize_shifts, IntArg activation_min, IntArg activation_max) {
        constexpr const char* op = "quantized_linear_s16";
        auto x = require_array<int16_t>(op, "input", input, 1, 32);
        auto w = require_array<int8_t>(op, "weights", weights, 2, 2);
        const int64_t depth = x.shape(x.ndim() - 1);
        const int64_t channels = w.shape(0);
        if (w.shape(1) != depth)
          raise_value_error(op, "weights shape " + shape_string(w) + " must be (C_out, " +
                                    std::to_string(depth) + ") to match input shape " +
                                    shape_string(x));
        if (depth < 1 || channels < 1 || x.size() == 0)
          raise_value_error(op, "input " + shape_string(x) + " and weights " + shape_string(w) +
                                    " must not be empty");
        const int64_t batches = x.size() / depth;
        if (batches > INT32_MAX || depth > INT32_MAX || channels > INT32_MAX)
          raise_value_error(op, "input " + shape_string(x) + " or weights " + shape_string(w) +
                                    " is too large");

        py::array_t<int64_t, py::array::c_style> b;
        if (!bias.is_none()) {
          b = require_array<int64_t>(op, "bias", bias, 1, 1);
          if (b.shape(0) != channels)
            raise_value_error(op, "bias shape " + shape_string(b) + " must be (" +
                                      std::to_string(channels) + ",) to match weights shape " +
                                      shape_string(w));
        }
        const auto multipliers = require_int32_values(op, "requantize_multipliers",
                                                      requantize_multipliers);
        const auto shifts = require_int32_values(op, "requantize_shifts", requantize_shifts);
        if (multipliers.size() != 1 && multipliers.size() != static_cast<size_t>(channels))
          raise_value_error(op, "requantize_multipliers has " +
                                    std::to_string(multipliers.size()) +
                                    " elements, must have 1 or C_out = " +
                                    std::to_string(channels));
        if (shifts.size() != multipliers.size())
          raise_value_error(op, "requantize_shifts has " + std::to_string(shifts.size()) +
                                    " elements, must have " +
                                    std::to_string(multipliers.size()) +
                                    " like requantize_multipliers");

        LinearS16Params p;
        p.batches = static_cast<int32_t>(batches);
        p.input_features = static_cast<int32_t>(depth);
        p.output_features = static_cast<int32_t>(channels);
        p.activation_min = require_int(op, "activation_min", activation_min, -32768, 32767);
        p.activation_max = require_int(op, "activation_max", activation_max, -32768, 32767);
        p.multipliers = multipliers.data();
        p.shifts = shifts.data();
        p.num_multipliers = static_cast<int32_t>(multipliers.size());
        check(op, quantized_linear_s16_prepare(p));

        std::vector<py::ssize_t> out_shape(x.shape(), x.shape() + x.ndim());
        out_shape.back() = static_cast<py::ssize_t>(channels);
        py::array_t<int16_t> out(out_shape);
        const int64_t* bias_data = bias.is_none() ? nullptr : b.data();
        std::vector<int32_t> scratch(
            (quantized_linear_s16_scratch_size(p, Isa::kScalar) + 3) / sizeof(int32_t));
        int16_t* out_data = out.mutable_data();
        {
          py::gil_scoped_release release;
          quantized_linear_s16(p, x.data(), w.data(), bias_data, out_data, scratch.data());
        }
        return out;
      },
      py::arg("input"), py::arg("weights"), py::arg("bias"), py::arg("requantize_multipliers"),
      py::arg("requantize_shifts"), py::arg("activation_min") = -32768,
      py::arg("activation_max") = 32767,
      "int16 [..., K] (zero point 0) x int8 [C_out, K]^T (zero point 0) + int64 bias -> int16 "
      "[..., C_out] (zero point 0), arm_fully_connected_s16 arithmetic: 64-bit sums, per-tensor "
      "or per-channel arm_nn_requantize_s64 with the multiplier reduced to 16 bits (shifts in "
      "[-31, 7]).");
}

}  // namespace cortexm::bindings
