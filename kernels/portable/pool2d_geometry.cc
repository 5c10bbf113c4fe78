#include "pool2d_geometry.h"

namespace cortexm::portable {

int64_t pool2d_output_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil,
                           bool ceil_mode) {
  const int64_t span = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

Error check_pool2d(const Pool2dParams& p, Shape* output) {
  CORTEXM_RETURN_IF_ERROR(check_shape(p.input, "self"));
  const int r = p.input.rank;
  if (r != 3 && r != 4) return invalid("self.rank", r, "must be 3 (CHW) or 4 (NCHW)");
  for (int d = r - 3; d < r; ++d)
    if (p.input.dims[d] < 1) return invalid("self.shape", p.input.dims[d], "must be >= 1", d);
  constexpr int64_t kLimit = int64_t{1} << 30;
  if (p.kernel_h < 1 || p.kernel_h > kLimit) return invalid("kernel_size", p.kernel_h, "must be in [1, 2^30]", 0);
  if (p.kernel_w < 1 || p.kernel_w > kLimit) return invalid("kernel_size", p.kernel_w, "must be in [1, 2^30]", 1);
  if (p.stride_h < 1 || p.stride_h > kLimit) return invalid("stride", p.stride_h, "must be in [1, 2^30]", 0);
  if (p.stride_w < 1 || p.stride_w > kLimit) return invalid("stride", p.stride_w, "must be in [1, 2^30]", 1);
  if (p.dilation_h < 1 || p.dilation_h > kLimit) return invalid("dilation", p.dilation_h, "must be in [1, 2^30]", 0);
  if (p.dilation_w < 1 || p.dilation_w > kLimit) return invalid("dilation", p.dilation_w, "must be in [1, 2^30]", 1);
  if (p.pad_h < 0 || p.pad_h > p.kernel_h / 2) return invalid("padding", p.pad_h, "must be in [0, kernel_size / 2]", 0);
  if (p.pad_w < 0 || p.pad_w > p.kernel_w / 2) return invalid("padding", p.pad_w, "must be in [0, kernel_size / 2]", 1);
  const Pool2dGeometry g = pool2d_geometry(p);
  if (g.oh < 1) return invalid("output_size", g.oh, "must be >= 1 (input too small)", 0);
  if (g.ow < 1) return invalid("output_size", g.ow, "must be >= 1 (input too small)", 1);
  Shape out = p.input;
  out.dims[r - 2] = g.oh;
  out.dims[r - 1] = g.ow;
  CORTEXM_RETURN_IF_ERROR(check_shape(out, "output"));
  if (output) *output = out;
  return kOk;
}

}  // namespace cortexm::portable
