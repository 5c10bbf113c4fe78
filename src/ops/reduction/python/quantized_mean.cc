#include <algorithm>
#include <vector>

#include "bindings/requant_args.h"
#include "cortexm/kernels/quantized_mean.h"

namespace cortexm::bindings {

void bind_quantized_mean(py::module_& ops) {
  ops.def(
      "quantized_mean",
      [](py::handle input, py::handle dim, py::handle keepdim_arg, IntArg input_offset,
         IntArg output_offset, IntArg output_multiplier, IntArg output_shift,
         IntArg activation_min, IntArg activation_max) {
        constexpr const char* op = "quantized_mean";
        auto x = require_array<int8_t>(op, "input", input, 1, 32);
        const int64_t rank = x.ndim();
        const bool keepdim = require_bool(op, "keepdim", keepdim_arg);
        std::vector<int64_t> dims = require_int_list(op, "dim", dim, {});
        if (dims.empty()) raise_value_error(op, "dim must name at least one dim");
        for (int64_t& d : dims) {
          if (d < -rank || d >= rank)
            raise_value_error(op, "dim = " + std::to_string(d) + " is out of range for input " +
                                      shape_string(x));
          if (d < 0) d += rank;
        }
        std::sort(dims.begin(), dims.end());
        if (std::adjacent_find(dims.begin(), dims.end()) != dims.end())
          raise_value_error(op, "dim repeats a dim");
        if (dims.back() - dims.front() + 1 != static_cast<int64_t>(dims.size()))
          raise_value_error(op, "dim must be a contiguous block of dims");
        int64_t outer = 1, reduce = 1, inner = 1;
        std::vector<py::ssize_t> out_shape;
        for (int64_t d = 0; d < rank; ++d) {
          const int64_t e = x.shape(d);
          if (d < dims.front()) outer *= e;
          else if (d > dims.back()) inner *= e;
          else reduce *= e;
          if (d < dims.front() || d > dims.back()) out_shape.push_back(e);
          else if (keepdim) out_shape.push_back(1);
        }
        if (outer > INT32_MAX || reduce > INT32_MAX || inner > INT32_MAX)
          raise_value_error(op, "input " + shape_string(x) + " is too large");
        MeanParams p;
        p.outer = static_cast<int32_t>(outer);
        p.reduce = static_cast<int32_t>(reduce);
        p.inner = static_cast<int32_t>(inner);
        p.input_offset = require_int(op, "input_offset", input_offset, -127, 128);
        p.output_offset = require_zero_point(op, "output_offset", output_offset);
        p.multiplier = require_multiplier(op, "output_multiplier", output_multiplier);
        p.shift = require_shift(op, "output_shift", output_shift);
        require_activation_range<int8_t>(op, activation_min, activation_max, &p);
        check(op, quantized_mean_prepare(p));
        py::array_t<int8_t> out(out_shape);
        const int8_t* in_data = x.data();
        int8_t* out_data = out.mutable_data();
        run_released(quantized_mean_scratch_size(p, Isa::kScalar), [&](void* scratch) {
          quantized_mean(p, in_data, out_data, scratch);
        });
        return out;
      },
      py::arg("input"), py::arg("dim"), py::arg("keepdim"), py::arg("input_offset"),
      py::arg("output_offset"), py::arg("output_multiplier"), py::arg("output_shift"),
      py::arg("activation_min") = -128, py::arg("activation_max") = 127,
      "int8 mean over a contiguous block of dims: the centered sum requantized by "
      "output_multiplier / output_shift for s_in / (count * s_out), plus output_offset.");
}

}  // namespace cortexm::bindings
