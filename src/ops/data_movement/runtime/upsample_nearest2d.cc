// UpsampleNearest2d: NCHW logical; source index floor(dst * (in / out)) with the ratio in float32,
// as torch computes it.
#include <cmath>

#include "cortexm/portable/upsample_nearest2d.h"
#include "runtime/ops/portable_layout.h"

namespace cortexm::runtime {

namespace {

int64_t source_index(int64_t o, int64_t in, int64_t out) {
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  const int64_t s = static_cast<int64_t>(std::floor(static_cast<float>(o) * scale));
  return s < in - 1 ? s : in - 1;
}

portable::UpsampleNearest2dParams portable_params(const OpContext& ctx) {
  auto u = moved_bytes_params<portable::UpsampleNearest2dParams>(ctx);
  u.out_h = ctx.output().shape[2];
  u.out_w = ctx.output().shape[3];
  return u;
}

}  // namespace

Status prepare_upsample_nearest2d(const OpContext& ctx) {
  const TensorView in = ctx.input(0), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_input_dtype(ctx));
  CORTEXM_RETURN_IF_STATUS(require_rank(ctx, "input", in, 4));
  CORTEXM_RETURN_IF_STATUS(require_rank(ctx, "output", out, 4));
  for (int32_t d = 0; d < 2; ++d)
    if (out.shape[d] != in.shape[d]) return ctx.fail("output.shape", out.shape[d], "must be the input's", d);
  for (int32_t d = 2; d < 4; ++d)
    if (out.shape[d] < 1 || in.shape[d] < 1) return ctx.fail("output.shape", out.shape[d], "must be >= 1", d);
  return check_contiguous_kernel(ctx, [&] { return portable::upsample_nearest2d_prepare(portable_params(ctx)); });
}

void run_upsample_nearest2d(const OpContext& ctx) {
  if (all_contiguous(ctx)) {
    portable::upsample_nearest2d(portable_params(ctx), ctx.input(0).data, ctx.output().data);
    return;
  }
  const TensorView in = ctx.input(0), out = ctx.output();
  const int64_t es = static_cast<int64_t>(in.element_size());
  // Each output pixel (y, x) copies the [N, C] plane slice of one input pixel.
  for (int64_t y = 0; y < out.shape[2]; ++y) {
    const int64_t sy = source_index(y, in.shape[2], out.shape[2]);
    for (int64_t x = 0; x < out.shape[3]; ++x) {
      const int64_t sx = source_index(x, in.shape[3], out.shape[3]);
      TensorView src = in, dst = out;
      src.shape[2] = src.shape[3] = dst.shape[2] = dst.shape[3] = 1;
      src.data = in.data + (sy * in.strides[2] + sx * in.strides[3]) * es;
      dst.data = out.data + (y * out.strides[2] + x * out.strides[3]) * es;
      copy_logical(src, dst);
    }
  }
}

}  // namespace cortexm::runtime
