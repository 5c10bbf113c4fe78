// The pooling bindings, average and max: one binding template over the kernel (same arguments,
// same decoding in pool_args.h).
#include "ops/pool/python/pool_args.h"
#include "bindings/requant_args.h"
#include "cortexm/kernels/quantized_avg_pool2d.h"
#include "cortexm/kernels/quantized_max_pool2d.h"

namespace cortexm::bindings {
namespace {

struct PoolKernel {
  const char* name;
  Error (*prepare)(const Pool2dParams&);
  size_t (*scratch_size)(const Pool2dParams&, Isa);  // nullptr: the kernel needs none
  void (*run)(const Pool2dParams&, const int8_t* input, int8_t* output, void* scratch);
};

void def_pool(py::module_& ops, PoolKernel kernel, const char* doc) {
  ops.def(
      kernel.name,
      [kernel](py::handle input, py::handle kernel_size, py::handle stride, py::handle padding,
               IntArg activation_min, IntArg activation_max) {
        const char* op = kernel.name;
        PoolArgs args =
            pool_args(op, input, kernel_size, stride, padding, activation_min, activation_max);
        const Pool2dParams& p = args.params;
        check(op, kernel.prepare(p));
        py::array_t<int8_t> out = pool_output(p);
        const int8_t* in_data = args.input.data();
        int8_t* out_data = out.mutable_data();
        run_released(kernel.scratch_size ? kernel.scratch_size(p, Isa::kScalar) : 0,
                     [&](void* scratch) { kernel.run(p, in_data, out_data, scratch); });
        return out;
      },
      py::arg("input"), py::arg("kernel_size"), py::arg("stride"), py::arg("padding") = 0,
      py::arg("activation_min") = qmin<int8_t>, py::arg("activation_max") = qmax<int8_t>, doc);
}

}  // namespace

void bind_quantized_avg_pool2d(py::module_& ops) {
  def_pool(ops,
           {"quantized_avg_pool2d", quantized_avg_pool2d_prepare,
            quantized_avg_pool2d_scratch_size, quantized_avg_pool2d},
           "NHWC int8 average pool over the valid (unpadded) taps, halves away from zero "
           "(arm_avgpool_s8 arithmetic). padding is (pad_h, pad_w) or (top, left, bottom, right).");
}

void bind_quantized_max_pool2d(py::module_& ops) {
  def_pool(ops,
           {"quantized_max_pool2d", quantized_max_pool2d_prepare, nullptr,
            [](const Pool2dParams& p, const int8_t* input, int8_t* output, void*) {
              quantized_max_pool2d(p, input, output);
            }},
           "NHWC int8 max pool over the valid (unpadded) taps, then the activation clamp "
           "(arm_max_pool_s8). padding is (pad_h, pad_w) or (top, left, bottom, right).");
}

}  // namespace cortexm::bindings
