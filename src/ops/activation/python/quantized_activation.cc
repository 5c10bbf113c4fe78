// The table activations, int8 (256 entries) and int16 (513 entries, interpolated): one binding
// template over the element type.
#include "bindings/requant_args.h"
#include "cortexm/kernels/quantized_activation.h"
#include "cortexm/kernels/quantized_activation_s16.h"

namespace cortexm::bindings {
namespace {

template <typename T, typename Params>
struct TableKernel {
  const char* name;
  py::ssize_t table_size;
  Error (*prepare)(const Params&);
  void (*run)(const Params&, const T*, T*);
};

template <typename T, typename Params>
void def_table_activation(py::module_& ops, TableKernel<T, Params> kernel, const char* doc) {
  ops.def(
      kernel.name,
      [kernel](py::handle input, py::handle table) {
        const char* op = kernel.name;
        auto x = require_array<T>(op, "input", input, 0, 32);
        auto t = require_array<T>(op, "table", table, 1, 1);
        if (t.shape(0) != kernel.table_size)
          raise_value_error(op, "table " + shape_string(t) + " must have " +
                                    std::to_string(kernel.table_size) + " entries");
        Params p;
        p.count = static_cast<int64_t>(x.size());
        p.table = t.data();
        check(op, kernel.prepare(p));
        py::array_t<T> out = array_like<T>(x);
        {
          py::gil_scoped_release release;
          kernel.run(p, x.data(), out.mutable_data());
        }
        return out;
      },
      py::arg("input"), py::arg("table"), doc);
}

}  // namespace

void bind_quantized_activation(py::module_& ops) {
  def_table_activation<int8_t, ActivationParams>(
      ops,
      {"quantized_activation", kActivationTableSize, quantized_activation_prepare,
       quantized_activation},
      "int8 -> int8 through a 256-entry table: out = table[input + 128].");
}

void bind_quantized_activation_s16(py::module_& ops) {
  def_table_activation<int16_t, ActivationS16Params>(
      ops,
      {"quantized_activation_s16", kActivationS16TableSize, quantized_activation_s16_prepare,
       quantized_activation_s16},
      "int16 -> int16 through a 513-entry table with TFLite's interpolation: i = 256 + (x >> 7), "
      "out = table[i] + (((table[i + 1] - table[i]) * (x & 127) + 64) >> 7).");
}

}  // namespace cortexm::bindings
