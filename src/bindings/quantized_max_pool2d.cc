#include "bindings/pool_args.h"
#include "cortexm/kernels/quantized_max_pool2d.h"

namespace cortexm::bindings {

void bind_quantized_max_pool2d(py::module_& ops) {
  ops.def(
      "quantized_max_pool2d",
      [](py::handle input, py::handle kernel_size, py::handle stride, py::handle padding,
         IntArg activation_min, IntArg activation_max) {
        constexpr const char* op = "quantized_max_pool2d";
        PoolArgs args =
            pool_args(op, input, kernel_size, stride, padding, activation_min, activation_max);
        const Pool2dParams& p = args.params;
        check(op, quantized_max_pool2d_prepare(p));
        py::array_t<int8_t> out = pool_output(p);
        int8_t* out_data = out.mutable_data();
        {
          py::gil_scoped_release release;
          quantized_max_pool2d(p, args.input.data(), out_data);
        }
        return out;
      },
      py::arg("input"), py::arg("kernel_size"), py::arg("stride"), py::arg("padding") = 0,
      py::arg("activation_min") = -128, py::arg("activation_max") = 127,
      "NHWC int8 max pool over the valid (unpadded) taps, then the activation clamp "
      "(arm_max_pool_s8). padding is (pad_h, pad_w) or (top, left, bottom, right).");
}

}  // namespace cortexm::bindings
