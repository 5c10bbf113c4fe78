// Arguments shared by the convolution bindings: the NHWC input and weight arrays, stride, padding
// and dilation, per-channel requantize parameters and the optional bias.
#pragma once

#include <string>
#include <vector>

#include "bindings/numpy_args.h"
#include "cortexm/kernels/conv_params.h"

namespace cortexm::bindings {

// A rank-4 array of T (int8, or int16 for the 16x8 kernels) whose extents fit int32, as Dims4.
template <typename T>
Dims4 require_nhwc(const char* op, const char* name, const py::handle& obj,
                   py::array_t<T, py::array::c_style>* array) {
  *array = require_array<T>(op, name, obj, 4, 4);
  for (int d = 0; d < 4; ++d) {
    if (array->shape(d) > INT32_MAX)
      raise_value_error(op, std::string(name) + " shape " + shape_string(*array) +
                                " has an extent of 2^31 or more");
  }
  return Dims4{static_cast<int32_t>(array->shape(0)), static_cast<int32_t>(array->shape(1)),
               static_cast<int32_t>(array->shape(2)), static_cast<int32_t>(array->shape(3))};
}

inline std::vector<int32_t> require_geometry_ints(const char* op, const char* name,
                                                  const py::handle& obj,
                                                  std::initializer_list<size_t> lengths,
                                                  int64_t lo) {
  std::vector<int32_t> out;
  const auto values = require_int_list(op, name, obj, lengths);
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string element = std::string(name) + "[" + std::to_string(i) + "]";
    out.push_back(require_int(op, element.c_str(), values[i], lo, INT32_MAX));
  }
  return out;
}

// stride and dilation (h, w); padding (pad_h, pad_w) or (top, left, bottom, right).
inline ConvGeometry require_conv_geometry(const char* op, const py::handle& stride,
                                          const py::handle& padding, const py::handle& dilation) {
  ConvGeometry g;
  const auto s = require_geometry_ints(op, "stride", stride, {2}, 1);
  const auto pad = require_geometry_ints(op, "padding", padding, {2, 4}, 0);
  const auto d = require_geometry_ints(op, "dilation", dilation, {2}, 1);
  g.stride_h = s[0];
  g.stride_w = s[1];
  g.dilation_h = d[0];
  g.dilation_w = d[1];
  if (pad.size() == 2) {
    g.padding = {pad[0], pad[1], pad[0], pad[1]};
  } else {
    g.padding = {pad[0], pad[1], pad[2], pad[3]};
  }
  return g;
}

// One int32 per output channel, from a list, a tuple or a 1-D int32 array.
inline std::vector<int32_t> require_per_channel(const char* op, const char* name,
                                                const py::handle& obj, int64_t channels) {
  std::vector<int32_t> values;
  if (py::isinstance<py::array>(obj)) {
    const auto a = require_array<int32_t>(op, name, obj, 1, 1);
    values.assign(a.data(), a.data() + a.size());
  } else {
    values = require_int32_values(op, name, obj);
  }
  // With no output channels the kernel's prepare step reports the weight shape instead.
  if (channels >= 1 && static_cast<int64_t>(values.size()) != channels)
    raise_value_error(op, std::string(name) + " has " + std::to_string(values.size()) +
                              " elements, must have C_out = " + std::to_string(channels));
  return values;
}

// None, or an int32 array of shape (channels,). Returns its data or nullptr.
inline const int32_t* require_bias(const char* op, const py::handle& obj, int64_t channels,
                                   py::array_t<int32_t, py::array::c_style>* array) {
  if (obj.is_none()) return nullptr;
  *array = require_array<int32_t>(op, "bias", obj, 1, 1);
  if (array->shape(0) != channels)
    raise_value_error(op, "bias shape " + shape_string(*array) + " must be (" +
                              std::to_string(channels) + ",), one per output channel");
  return array->data();
}

inline ConvQuantParams require_conv_quant(const char* op, const IntArg& input_offset,
                                          const IntArg& output_offset,
                                          const std::vector<int32_t>& multipliers,
                                          const std::vector<int32_t>& shifts,
                                          const IntArg& activation_min,
                                          const IntArg& activation_max) {
  ConvQuantParams q;
  q.input_offset = require_int(op, "input_offset", input_offset, -127, 128);
  q.output_offset = require_int(op, "output_offset", output_offset, -128, 127);
  q.activation_min = require_int(op, "activation_min", activation_min, -128, 127);
  q.activation_max = require_int(op, "activation_max", activation_max, -128, 127);
  q.multipliers = multipliers.data();
  q.shifts = shifts.data();
  return q;
}

}  // namespace cortexm::bindings
