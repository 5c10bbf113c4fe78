// Arguments shared by the convolution bindings: the NHWC input and weight arrays, stride, padding
// and dilation, per-channel requantize parameters and the optional bias.
#pragma once

#include <string>
#include <vector>

#include "bindings/requant_args.h"
#include "cortexm/kernels/conv_params.h"

namespace cortexm::bindings {

// A rank-4 array of T (int8, or int16 for the 16x8 kernels' input and the 16x16 weight) whose extents fit int32, as Dims4.
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

// None, or a TBias array of shape (channels,) (int32; int64 for the 16x8 kernels). Returns its
// data or nullptr.
template <typename TBias>
const TBias* require_bias(const char* op, const py::handle& obj, int64_t channels,
                          py::array_t<TBias, py::array::c_style>* array) {
  if (obj.is_none()) return nullptr;
  *array = require_array<TBias>(op, "bias", obj, 1, 1);
  if (array->shape(0) != channels)
    raise_value_error(op, "bias shape " + shape_string(*array) + " must be (" +
                              std::to_string(channels) + ",), one per output channel");
  return array->data();
}

// Which weight dim counts the output channels: n for conv and transpose conv (OHWI), c for
// depthwise ([1, KH, KW, C_in * m]).
enum class ChannelDim { kN, kC };

// The arrays of a convolution and its per-channel requantize parameters, checked against the
// weight's output channels. TWeight: int8, or int16 for the 16x16 kernel.
template <typename TIn, typename TBias, typename TWeight = int8_t>
struct ConvOperands {
  py::array_t<TIn, py::array::c_style> input;
  py::array_t<TWeight, py::array::c_style> weight;
  py::array_t<TBias, py::array::c_style> bias;
  Dims4 input_dims, filter_dims;
  const TBias* bias_data = nullptr;
  std::vector<int32_t> multipliers, shifts;
};

template <typename TIn, typename TBias, typename TWeight = int8_t>
ConvOperands<TIn, TBias, TWeight> require_conv_operands(const char* op, py::handle input, py::handle weight,
                                               py::handle bias, ChannelDim channel_dim,
                                               py::handle requantize_multipliers,
                                               py::handle requantize_shifts) {
  ConvOperands<TIn, TBias, TWeight> a;
  a.input_dims = require_nhwc(op, "input", input, &a.input);
  a.filter_dims = require_nhwc(op, "weight", weight, &a.weight);
  const int32_t channels = channel_dim == ChannelDim::kN ? a.filter_dims.n : a.filter_dims.c;
  a.bias_data = require_bias(op, bias, channels, &a.bias);
  a.multipliers =
      require_per_channel(op, "requantize_multipliers", requantize_multipliers, channels);
  a.shifts = require_per_channel(op, "requantize_shifts", requantize_shifts, channels);
  return a;
}

// Output dims into p, then run_weighted into an NHWC output.
template <typename TOut, typename TIn, typename TBias, typename TWeight, typename Params>
py::array_t<TOut> run_conv(const char* op, const ConvOperands<TIn, TBias, TWeight>& a, Params& p,
                           Dims4 (*output_dims)(const Params&), Error (*prepare)(const Params&),
                           size_t (*scratch_size)(const Params&, Isa),
                           void (*kernel)(const Params&, const TIn*, const TWeight*, const TBias*,
                                          TOut*, void*)) {
  p.output = output_dims(p);
  return run_weighted<TOut>(op, a, p, prepare, scratch_size, kernel,
                            {p.output.n, p.output.h, p.output.w, p.output.c});
}

inline ConvQuantParams require_conv_quant(const char* op, const IntArg& input_offset,
                                          const IntArg& output_offset,
                                          const std::vector<int32_t>& multipliers,
                                          const std::vector<int32_t>& shifts,
                                          const IntArg& activation_min,
                                          const IntArg& activation_max) {
  ConvQuantParams q;
  q.input_offset = require_int(op, "input_offset", input_offset, -127, 128);
  q.output_offset = require_zero_point(op, "output_offset", output_offset);
  require_activation_range<int8_t>(op, activation_min, activation_max, &q);
  q.multipliers = multipliers.data();
  q.shifts = shifts.data();
  return q;
}

}  // namespace cortexm::bindings
