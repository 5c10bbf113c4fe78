// Pooling arguments shared by the avg and max pool bindings: an NHWC int8 input, kernel_size,
// stride and padding given as an int or a sequence, the activation range.
#pragma once

#include <string>
#include <vector>

#include "bindings/requant_args.h"
#include "cortexm/kernels/pool_params.h"

namespace cortexm::bindings {

// An int, or a sequence of ints of one of the allowed lengths, each fitting int32.
inline std::vector<int32_t> require_pool_ints(const char* op, const char* name,
                                              const py::handle& obj,
                                              std::initializer_list<size_t> lengths) {
  std::vector<int64_t> values;
  if (!py::isinstance<py::array>(obj) && !py::isinstance<py::bool_>(obj) &&
      PyIndex_Check(obj.ptr())) {
    try {
      values.push_back(obj.cast<int64_t>());
    } catch (const py::cast_error&) {
      raise_value_error(op, std::string(name) + " = " + std::string(py::str(obj)) +
                                " does not fit in int32");
    }
  } else {
    values = require_int_list(op, name, obj, lengths);
  }
  std::vector<int32_t> out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < INT32_MIN || values[i] > INT32_MAX)
      raise_value_error(op, std::string(name) + "[" + std::to_string(i) + "] = " +
                                std::to_string(values[i]) + " does not fit in int32");
    out.push_back(static_cast<int32_t>(values[i]));
  }
  return out;
}

struct PoolArgs {
  py::array_t<int8_t, py::array::c_style> input;
  Pool2dParams params;
};

// Output dims come from pool2d_output_dims; the kernel's prepare step validates the rest.
inline PoolArgs pool_args(const char* op, const py::handle& input, const py::handle& kernel_size,
                          const py::handle& stride, const py::handle& padding,
                          const IntArg& activation_min, const IntArg& activation_max) {
  PoolArgs args;
  args.input = require_array<int8_t>(op, "input", input, 4, 4);
  for (int d = 0; d < 4; ++d) {
    if (args.input.shape(d) < 1 || args.input.shape(d) > INT32_MAX)
      raise_value_error(op, "input shape " + shape_string(args.input) +
                                " must be non-empty NHWC with extents below 2^31");
  }
  Pool2dParams& p = args.params;
  p.input.n = static_cast<int32_t>(args.input.shape(0));
  p.input.h = static_cast<int32_t>(args.input.shape(1));
  p.input.w = static_cast<int32_t>(args.input.shape(2));
  p.input.c = static_cast<int32_t>(args.input.shape(3));
  const auto kernel = require_pool_ints(op, "kernel_size", kernel_size, {1, 2});
  p.kernel_h = kernel[0];
  p.kernel_w = kernel.back();
  const auto strides = require_pool_ints(op, "stride", stride, {1, 2});
  p.stride_h = strides[0];
  p.stride_w = strides.back();
  const auto pads = require_pool_ints(op, "padding", padding, {1, 2, 4});
  if (pads.size() == 4) {  // (top, left, bottom, right)
    p.padding.top = pads[0];
    p.padding.left = pads[1];
    p.padding.bottom = pads[2];
    p.padding.right = pads[3];
  } else {  // (pad_h, pad_w) or one value for all sides
    p.padding.top = p.padding.bottom = pads[0];
    p.padding.left = p.padding.right = pads.back();
  }
  require_activation_range<int8_t>(op, activation_min, activation_max, &p);
  p.output = pool2d_output_dims(p);
  return args;
}

inline py::array_t<int8_t> pool_output(const Pool2dParams& p) {
  return py::array_t<int8_t>(std::vector<py::ssize_t>{p.output.n, p.output.h, p.output.w,
                                                      p.output.c});
}

}  // namespace cortexm::bindings
