#include "cortexm/kernels/pool_params.h"

namespace cortexm {

Dims4 pool2d_output_dims(const Pool2dParams& p) {
  Dims4 out;
  out.n = p.input.n;
  out.c = p.input.c;
  const bool geometry_ok = p.kernel_h >= 1 && p.kernel_w >= 1 && p.stride_h >= 1 && p.stride_w >= 1;
  out.h = geometry_ok ? window_output_size(p.input.h, p.kernel_h, p.stride_h, 1, p.padding.top,
                                           p.padding.bottom)
                      : 0;
  out.w = geometry_ok ? window_output_size(p.input.w, p.kernel_w, p.stride_w, 1, p.padding.left,
                                           p.padding.right)
                      : 0;
  return out;
}

Error validate_pool2d(const Pool2dParams& p, bool int16) {
  if (p.input.n < 1) return invalid("input.shape[0]", p.input.n, "must be >= 1");
  if (p.input.h < 1) return invalid("input.shape[1]", p.input.h, "must be >= 1");
  if (p.input.w < 1) return invalid("input.shape[2]", p.input.w, "must be >= 1");
  if (p.input.c < 1) return invalid("input.shape[3]", p.input.c, "must be >= 1");
  if (p.kernel_h < 1) return invalid("kernel_size", p.kernel_h, "must be >= 1", 0);
  if (p.kernel_w < 1) return invalid("kernel_size", p.kernel_w, "must be >= 1", 1);
  if (p.stride_h < 1) return invalid("stride", p.stride_h, "must be >= 1", 0);
  if (p.stride_w < 1) return invalid("stride", p.stride_w, "must be >= 1", 1);
  // Padding below the kernel extent keeps at least one valid tap in every window.
  const Padding2d& pad = p.padding;
  if (pad.top < 0) return invalid("padding", pad.top, "must be >= 0", 0);
  if (pad.left < 0) return invalid("padding", pad.left, "must be >= 0", 1);
  if (pad.bottom < 0) return invalid("padding", pad.bottom, "must be >= 0", 2);
  if (pad.right < 0) return invalid("padding", pad.right, "must be >= 0", 3);
  if (pad.top >= p.kernel_h) return invalid("padding", pad.top, "must be < kernel_size[0]", 0);
  if (pad.left >= p.kernel_w) return invalid("padding", pad.left, "must be < kernel_size[1]", 1);
  if (pad.bottom >= p.kernel_h)
    return invalid("padding", pad.bottom, "must be < kernel_size[0]", 2);
  if (pad.right >= p.kernel_w) return invalid("padding", pad.right, "must be < kernel_size[1]", 3);
  const Dims4 expected = pool2d_output_dims(p);
  if (expected.h < 1)
    return invalid("input.shape[1]", p.input.h, "is smaller than the padded kernel");
  if (expected.w < 1)
    return invalid("input.shape[2]", p.input.w, "is smaller than the padded kernel");
  if (p.output.n != expected.n)
    return invalid("output.shape[0]", p.output.n, "must equal the batch");
  if (p.output.h != expected.h)
    return invalid("output.shape[1]", p.output.h, "must equal the computed height");
  if (p.output.w != expected.w)
    return invalid("output.shape[2]", p.output.w, "must equal the computed width");
  if (p.output.c != expected.c)
    return invalid("output.shape[3]", p.output.c, "must equal the input channels");
  CORTEXM_RETURN_IF_ERROR(check_activation_range(p.activation_min, p.activation_max, int16));
  return kOk;
}

}  // namespace cortexm
