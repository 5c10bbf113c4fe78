#include "ops/cortex_m_util.h"

namespace cortexm::ops {

void require_int8_nchw(const InferContext& ctx, size_t i, DType dtype) {
  require_rank(ctx, i, {4});
  require_dtype(ctx, i, {dtype});
  for (int64_t d : ctx.input(i).shape)
    if (d < 1 || d > INT32_MAX)
      ctx.fail("input " + std::to_string(i) + " shape " + shape_to_string(ctx.input(i).shape) +
               " has an extent outside [1, 2^31)");
}

std::vector<int8_t> nchw_to_nhwc(const Tensor& t) { return nchw_to_nhwc_as<int8_t>(t); }

void nhwc_to_nchw(const std::vector<int8_t>& nhwc, Tensor& out) { nhwc_to_nchw_as<int8_t>(nhwc, out); }

}  // namespace cortexm::ops
