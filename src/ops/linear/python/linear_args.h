// Operands shared by the linear bindings (int8 and 16x8): input [..., K], weights [C_out, K], the
// optional bias and per-tensor or per-channel requantize parameters, checked against each other.
#pragma once

#include <string>
#include <vector>

#include "bindings/requant_args.h"

namespace cortexm::bindings {

// TWeight: int8, or int16 for the 16x16 kernel.
template <typename TIn, typename TBias, typename TWeight = int8_t>
struct LinearOperands {
  py::array_t<TIn, py::array::c_style> input;
  py::array_t<TWeight, py::array::c_style> weight;
  py::array_t<TBias, py::array::c_style> bias;
  const TBias* bias_data = nullptr;
  int32_t batches = 0, input_features = 0, output_features = 0;
  std::vector<int32_t> multipliers, shifts;

  // [..., C_out]: the input's shape with its last dim replaced.
  std::vector<py::ssize_t> output_shape() const {
    std::vector<py::ssize_t> shape(input.shape(), input.shape() + input.ndim());
    shape.back() = output_features;
    return shape;
  }

  // The shape, bias and requantize fields every linear params struct has.
  template <typename Params>
  void fill(Params* p) const {
    p->batches = batches;
    p->input_features = input_features;
    p->output_features = output_features;
    p->multipliers = multipliers.data();
    p->shifts = shifts.data();
    p->num_multipliers = static_cast<int32_t>(multipliers.size());
  }
};

template <typename TIn, typename TBias, typename TWeight = int8_t>
LinearOperands<TIn, TBias, TWeight> require_linear_operands(const char* op, py::handle input,
                                                   py::handle weights, py::handle bias,
                                                   py::handle requantize_multipliers,
                                                   py::handle requantize_shifts) {
  LinearOperands<TIn, TBias, TWeight> a;
  const auto& x = a.input = require_array<TIn>(op, "input", input, 1, 32);
  const auto& w = a.weight = require_array<TWeight>(op, "weights", weights, 2, 2);
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
  a.batches = static_cast<int32_t>(batches);
  a.input_features = static_cast<int32_t>(depth);
  a.output_features = static_cast<int32_t>(channels);

  if (!bias.is_none()) {
    a.bias = require_array<TBias>(op, "bias", bias, 1, 1);
    if (a.bias.shape(0) != channels)
      raise_value_error(op, "bias shape " + shape_string(a.bias) + " must be (" +
                                std::to_string(channels) + ",) to match weights shape " +
                                shape_string(w));
    a.bias_data = a.bias.data();
  }
  a.multipliers = require_int32_values(op, "requantize_multipliers", requantize_multipliers);
  a.shifts = require_int32_values(op, "requantize_shifts", requantize_shifts);
  if (a.multipliers.size() != 1 && a.multipliers.size() != static_cast<size_t>(channels))
    raise_value_error(op, "requantize_multipliers has " + std::to_string(a.multipliers.size()) +
                              " elements, must have 1 or C_out = " + std::to_string(channels));
  if (a.shifts.size() != a.multipliers.size())
    raise_value_error(op, "requantize_shifts has " + std::to_string(a.shifts.size()) +
                              " elements, must have " + std::to_string(a.multipliers.size()) +
                              " like requantize_multipliers");
  return a;
}

}  // namespace cortexm::bindings
