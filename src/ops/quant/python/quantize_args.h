// Arguments shared by the quantize_per_tensor and dequantize_per_tensor bindings.
#pragma once

#include <cmath>
#include <string>

#include "bindings/numpy_args.h"
#include "cortexm/kernels/quantize_per_tensor.h"

namespace cortexm::bindings {

// int8 or int16 given as a numpy dtype, a type (np.int8), a string ('int16') or a torch dtype.
inline QuantDtype require_quant_dtype(const char* op, const py::handle& dtype) {
  const std::string text = py::str(dtype);
  if (text == "torch.int8") return QuantDtype::kInt8;
  if (text == "torch.int16") return QuantDtype::kInt16;
  py::dtype parsed;
  try {
    if (dtype.is_none()) throw py::type_error("None is not a dtype");
    parsed = py::dtype::from_args(py::reinterpret_borrow<py::object>(dtype));
  } catch (const py::error_already_set&) {
    raise_value_error(op, "dtype = " + std::string(py::repr(dtype)) + " must be int8 or int16");
  } catch (const py::type_error&) {
    raise_value_error(op, "dtype = " + std::string(py::repr(dtype)) + " must be int8 or int16");
  }
  if (parsed.equal(py::dtype::of<int8_t>())) return QuantDtype::kInt8;
  if (parsed.equal(py::dtype::of<int16_t>())) return QuantDtype::kInt16;
  raise_value_error(op, "dtype = " + std::string(py::str(parsed)) + " must be int8 or int16");
}

// Range checks with the dtype's bounds, then the kernel's own prepare step.
inline QuantizeParams quantize_params(const char* op, double scale, const IntArg& zero_point,
                                      const IntArg& quant_min, const IntArg& quant_max,
                                      const py::handle& dtype) {
  QuantizeParams p;
  p.dtype = require_quant_dtype(op, dtype);
  const std::string scale_text = py::repr(py::float_(scale));
  if (!(scale > 0.0) || !std::isfinite(scale))
    raise_value_error(op, "scale = " + scale_text + " must be finite and > 0");
  p.scale = static_cast<float>(scale);
  if (!(p.scale > 0.0f) || !std::isfinite(p.scale))
    raise_value_error(op, "scale = " + scale_text + " is not a finite positive float32");
  const bool is_int8 = p.dtype == QuantDtype::kInt8;
  const int64_t lo = is_int8 ? -128 : -32768, hi = is_int8 ? 127 : 32767;
  p.zero_point = require_int(op, "zero_point", zero_point, lo, hi);
  p.quant_min = require_int(op, "quant_min", quant_min, lo, hi);
  p.quant_max = require_int(op, "quant_max", quant_max, lo, hi);
  check(op, quantize_per_tensor_prepare(p));
  return p;
}

}  // namespace cortexm::bindings
