// quantize_per_tensor (float32 -> int8/int16) and dequantize_per_tensor (back): one argument list,
// decoded once by quantize_params (quantize_args.h).
#include <functional>
#include <string>
#include <vector>

#include "ops/quant/python/quantize_args.h"

namespace cortexm::bindings {
namespace {

// The op's body: it checks input first, then asks for the params (so a bad input is reported
// before bad qparams), and returns the result.
using QuantizeBody = py::array (*)(const char* op, py::handle input,
                                   const std::function<QuantizeParams()>& params);

void def_quantize_op(py::module_& ops, const char* name, QuantizeBody body, const char* doc) {
  ops.def(
      name,
      [name, body](py::handle input, double scale, IntArg zero_point, IntArg quant_min,
                   IntArg quant_max, py::handle dtype) {
        return body(name, input, [&] {
          return quantize_params(name, scale, zero_point, quant_min, quant_max, dtype);
        });
      },
      py::arg("input"), py::arg("scale"), py::arg("zero_point"), py::arg("quant_min"),
      py::arg("quant_max"), py::arg("dtype"), doc);
}

py::array quantize_body(const char* op, py::handle input,
                        const std::function<QuantizeParams()>& params) {
  auto x = require_array<float>(op, "input", input, 0, 32);
  const QuantizeParams p = params();
  std::vector<py::ssize_t> shape(x.shape(), x.shape() + x.ndim());
  py::array out = p.dtype == QuantDtype::kInt8 ? py::array(py::array_t<int8_t>(shape))
                                               : py::array(py::array_t<int16_t>(shape));
  const size_t count = static_cast<size_t>(x.size());
  void* out_data = out.mutable_data();
  {
    py::gil_scoped_release release;
    quantize_per_tensor(p, x.data(), out_data, count);
  }
  return out;
}

py::array dequantize_body(const char* op, py::handle input,
                          const std::function<QuantizeParams()>& params) {
  if (!py::isinstance<py::array>(input))
    raise_value_error(op, "input must be a numpy array, got " +
                              std::string(py::str(py::type::of(input).attr("__name__"))));
  const py::dtype input_dtype = py::reinterpret_borrow<py::array>(input).dtype();
  const bool input_is_int8 = input_dtype.equal(py::dtype::of<int8_t>());
  if (!input_is_int8 && !input_dtype.equal(py::dtype::of<int16_t>()))
    raise_value_error(op, "input dtype " + std::string(py::str(input_dtype)) +
                              " must be int8 or int16");
  const QuantizeParams p = params();
  if ((p.dtype == QuantDtype::kInt8) != input_is_int8)
    raise_value_error(op, std::string("dtype = ") +
                              (p.dtype == QuantDtype::kInt8 ? "int8" : "int16") +
                              " must match input dtype " + std::string(py::str(input_dtype)));
  py::array q;
  if (input_is_int8)
    q = require_array<int8_t>(op, "input", input, 0, 32);
  else
    q = require_array<int16_t>(op, "input", input, 0, 32);
  std::vector<py::ssize_t> shape(q.shape(), q.shape() + q.ndim());
  py::array_t<float> out(shape);
  const size_t count = static_cast<size_t>(q.size());
  const void* in_data = q.data();
  float* out_data = out.mutable_data();
  {
    py::gil_scoped_release release;
    dequantize_per_tensor(p, in_data, out_data, count);
  }
  return out;
}

}  // namespace

void bind_quantize_per_tensor(py::module_& ops) {
  def_quantize_op(
      ops, "quantize_per_tensor", quantize_body,
      "float32 -> int8/int16: clamp(zero_point + round_half_even(x * (1.0f / scale)), quant_min, "
      "quant_max) in float32 math, as quantized_decomposed.quantize_per_tensor. NaN maps to "
      "zero_point (clamped).");
}

void bind_dequantize_per_tensor(py::module_& ops) {
  def_quantize_op(ops, "dequantize_per_tensor", dequantize_body,
                  "int8/int16 -> float32: (q - zero_point) * scale in float32 math. dtype must be "
                  "the input's dtype.");
}

}  // namespace cortexm::bindings
