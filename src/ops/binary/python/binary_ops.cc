// The elementwise binary ops with numpy broadcasting (add, maximum, minimum, mul; int8 and int16):
// one runner for all of them, one binding per argument layout, like TFLite Micro's
// maximum_minimum.cc template over the op.
#include "ops/binary/python/broadcast_args.h"
#include "bindings/requant_args.h"
#include "cortexm/kernels/quantized_add.h"
#include "cortexm/kernels/quantized_add_s16.h"
#include "cortexm/kernels/quantized_maximum.h"
#include "cortexm/kernels/quantized_minimum.h"
#include "cortexm/kernels/quantized_mul.h"
#include "cortexm/kernels/quantized_mul_s16.h"

namespace cortexm::bindings {
namespace {

template <typename T, typename Params>
struct BinaryKernel {
  const char* name;
  Error (*prepare)(const Params&);
  void (*run)(const Params&, const T*, const T*, T*);
};

// Checks both operands, lets `decode` fill the op's qparams, then broadcasts, prepares and runs.
template <typename T, typename Params, typename Decode>
py::array_t<T> run_binary(const BinaryKernel<T, Params>& kernel, py::handle self, py::handle other,
                          Decode decode) {
  const char* op = kernel.name;
  auto a = require_array<T>(op, "self", self, 0, kMaxBroadcastRank);
  auto b = require_array<T>(op, "other", other, 0, kMaxBroadcastRank);
  Params p;
  decode(op, &p);
  auto operands = broadcast_operands(op, a, b);
  p.shape = operands.shape;
  check(op, kernel.prepare(p));
  py::array_t<T> out(operands.output_shape);
  T* out_data = out.mutable_data();
  {
    py::gil_scoped_release release;
    kernel.run(p, a.data(), b.data(), out_data);
  }
  return out;
}

// self_multiplier / self_shift and other_multiplier / other_shift: each input's rescale to the
// common scale.
template <typename Params>
void require_input_rescales(const char* op, const IntArg& self_multiplier,
                            const IntArg& self_shift, const IntArg& other_multiplier,
                            const IntArg& other_shift, Params* p) {
  p->lhs_multiplier = require_multiplier(op, "self_multiplier", self_multiplier);
  p->lhs_shift = require_shift(op, "self_shift", self_shift);
  p->rhs_multiplier = require_multiplier(op, "other_multiplier", other_multiplier);
  p->rhs_shift = require_shift(op, "other_shift", other_shift);
}

// int8 ops that rescale both inputs to a common scale first (add, maximum, minimum).
template <typename Params>
void def_rescaled_binary(py::module_& ops, BinaryKernel<int8_t, Params> kernel, const char* doc) {
  ops.def(
      kernel.name,
      [kernel](py::handle self, IntArg self_zero_point, IntArg self_multiplier, IntArg self_shift,
               py::handle other, IntArg other_zero_point, IntArg other_multiplier,
               IntArg other_shift, IntArg output_zero_point, IntArg output_multiplier,
               IntArg output_shift, IntArg activation_min, IntArg activation_max) {
        return run_binary(kernel, self, other, [&](const char* op, Params* p) {
          p->lhs_offset = -require_zero_point(op, "self_zero_point", self_zero_point);
          p->rhs_offset = -require_zero_point(op, "other_zero_point", other_zero_point);
          p->output_offset = require_zero_point(op, "output_zero_point", output_zero_point);
          require_input_rescales(op, self_multiplier, self_shift, other_multiplier, other_shift, p);
          require_output_requantize<int8_t>(op, output_multiplier, output_shift, activation_min,
                                            activation_max, p);
        });
      },
      py::arg("self"), py::arg("self_zero_point"), py::arg("self_multiplier"),
      py::arg("self_shift"), py::arg("other"), py::arg("other_zero_point"),
      py::arg("other_multiplier"), py::arg("other_shift"), py::arg("output_zero_point"),
      py::arg("output_multiplier"), py::arg("output_shift"),
      py::arg("activation_min") = qmin<int8_t>, py::arg("activation_max") = qmax<int8_t>, doc);
}

}  // namespace

void bind_quantized_add(py::module_& ops) {
  def_rescaled_binary<AddParams>(
      ops, {"quantized_add", quantized_add_prepare, quantized_add},
      "int8 + int8 -> int8 with numpy broadcasting (arm_elementwise_add_s8 arithmetic).");
}

void bind_quantized_maximum(py::module_& ops) {
  def_rescaled_binary<MinMaxParams>(
      ops, {"quantized_maximum", quantized_maximum_prepare, quantized_maximum},
      "elementwise maximum of int8 tensors with numpy broadcasting; inputs rescaled as in "
      "quantized_add (left shift 20, common scale), the winner requantized to the output.");
}

void bind_quantized_minimum(py::module_& ops) {
  def_rescaled_binary<MinMaxParams>(
      ops, {"quantized_minimum", quantized_minimum_prepare, quantized_minimum},
      "elementwise minimum of int8 tensors with numpy broadcasting; inputs rescaled as in "
      "quantized_add (left shift 20, common scale), the winner requantized to the output.");
}

void bind_quantized_mul(py::module_& ops) {
  const BinaryKernel<int8_t, MulParams> kernel{"quantized_mul", quantized_mul_prepare,
                                               quantized_mul};
  ops.def(
      kernel.name,
      [kernel](py::handle self, IntArg self_zero_point, py::handle other, IntArg other_zero_point,
               IntArg output_zero_point, IntArg output_multiplier, IntArg output_shift,
               IntArg activation_min, IntArg activation_max) {
        return run_binary(kernel, self, other, [&](const char* op, MulParams* p) {
          p->lhs_offset = -require_zero_point(op, "self_zero_point", self_zero_point);
          p->rhs_offset = -require_zero_point(op, "other_zero_point", other_zero_point);
          p->output_offset = require_zero_point(op, "output_zero_point", output_zero_point);
          require_output_requantize<int8_t>(op, output_multiplier, output_shift, activation_min,
                                            activation_max, p);
        });
      },
      py::arg("self"), py::arg("self_zero_point"), py::arg("other"), py::arg("other_zero_point"),
      py::arg("output_zero_point"), py::arg("output_multiplier"), py::arg("output_shift"),
      py::arg("activation_min") = qmin<int8_t>, py::arg("activation_max") = qmax<int8_t>,
      "int8 * int8 -> int8 with numpy broadcasting (arm_elementwise_mul_s8 arithmetic).");
}

void bind_quantized_add_s16(py::module_& ops) {
  const BinaryKernel<int16_t, AddS16Params> kernel{"quantized_add_s16",
                                                   quantized_add_s16_prepare, quantized_add_s16};
  ops.def(
      kernel.name,
      [kernel](py::handle self, IntArg self_multiplier, IntArg self_shift, py::handle other,
               IntArg other_multiplier, IntArg other_shift, IntArg output_multiplier,
               IntArg output_shift, IntArg activation_min, IntArg activation_max) {
        return run_binary(kernel, self, other, [&](const char* op, AddS16Params* p) {
          require_input_rescales(op, self_multiplier, self_shift, other_multiplier, other_shift, p);
          require_output_requantize<int16_t>(op, output_multiplier, output_shift, activation_min,
                                             activation_max, p);
        });
      },
      py::arg("self"), py::arg("self_multiplier"), py::arg("self_shift"), py::arg("other"),
      py::arg("other_multiplier"), py::arg("other_shift"), py::arg("output_multiplier"),
      py::arg("output_shift"), py::arg("activation_min") = qmin<int16_t>,
      py::arg("activation_max") = qmax<int16_t>,
      "int16 + int16 -> int16, symmetric (zero point 0), with numpy broadcasting "
      "(arm_elementwise_add_s16 arithmetic: each input << 15 and rescaled, summed, rescaled).");
}

void bind_quantized_mul_s16(py::module_& ops) {
  const BinaryKernel<int16_t, MulS16Params> kernel{"quantized_mul_s16",
                                                   quantized_mul_s16_prepare, quantized_mul_s16};
  ops.def(
      kernel.name,
      [kernel](py::handle self, py::handle other, IntArg output_multiplier, IntArg output_shift,
               IntArg activation_min, IntArg activation_max) {
        return run_binary(kernel, self, other, [&](const char* op, MulS16Params* p) {
          require_output_requantize<int16_t>(op, output_multiplier, output_shift, activation_min,
                                             activation_max, p);
        });
      },
      py::arg("self"), py::arg("other"), py::arg("output_multiplier"), py::arg("output_shift"),
      py::arg("activation_min") = qmin<int16_t>, py::arg("activation_max") = qmax<int16_t>,
      "int16 * int16 -> int16, symmetric (zero point 0), with numpy broadcasting "
      "(arm_elementwise_mul_s16 arithmetic: the product requantized).");
}

}  // namespace cortexm::bindings
