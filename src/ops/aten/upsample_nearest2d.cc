// aten.upsample_nearest2d.default: NCHW nearest-neighbour resize to output_size (OH, OW). The
// source index is floor(dst * (in / out)) with the ratio in float32, as torch computes it. Any
// dtype; per-tensor qparams pass through.
#include <cmath>

#include "ops/op_util.h"

namespace cortexm::ops {

namespace {

std::vector<int64_t> source_indices(int64_t in, int64_t out) {
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  std::vector<int64_t> src(out);
  for (int64_t o = 0; o < out; ++o)
    src[o] = std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * scale)), in - 1);
  return src;
}

template <typename T>
void upsample(const T* in, T* out, int64_t planes, int64_t h, int64_t w, int64_t oh,
              int64_t ow) {
  const std::vector<int64_t> rows = source_indices(h, oh), cols = source_indices(w, ow);
  for (int64_t p = 0; p < planes; ++p) {
    const T* plane = in + p * h * w;
    for (int64_t y = 0; y < oh; ++y) {
      const T* row = plane + rows[y] * w;
      T* orow = out + (p * oh + y) * ow;
      for (int64_t x = 0; x < ow; ++x) orow[x] = row[cols[x]];
    }
  }
}

}  // namespace

void register_aten_upsample_nearest2d(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.upsample_nearest2d.default";
  s.inputs = {{"self"}};
  s.attrs = {{"output_size", AttrKind::kInts}};
  s.is_data_movement = true;
  s.infer = [](const InferContext& ctx) {
    require_rank(ctx, 0, {4});
    const TensorInfo& in = ctx.input(0);
    const std::vector<int64_t>& size = ctx.ints("output_size");
    if (size.size() != 2)
      ctx.fail("attribute 'output_size' = " + shape_to_string(size) + " must be (OH, OW)");
    if (size[0] < 1 || size[1] < 1)
      ctx.fail("attribute 'output_size' = " + shape_to_string(size) + " must be positive");
    if (in.shape[2] < 1 || in.shape[3] < 1)
      ctx.fail("input " + info_to_string(in) + " has an empty spatial dim");
    TensorInfo out = make_info(in.dtype, {in.shape[0], in.shape[1], size[0], size[1]});
    out.qparams = passthrough_qparams(in);
    return std::vector<TensorInfo>{out};
  };
  s.kernel = [](const KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    Tensor& out = ctx.output();
    const auto& is = in.shape();
    const auto& os = out.shape();
    const int64_t planes = is[0] * is[1];
    switch (dtype_size(in.dtype())) {
      case 1:
        upsample(in.data<uint8_t>(), out.data<uint8_t>(), planes, is[2], is[3], os[2], os[3]);
        break;
      case 2:
        upsample(in.data<uint16_t>(), out.data<uint16_t>(), planes, is[2], is[3], os[2], os[3]);
        break;
      case 4:
        upsample(in.data<uint32_t>(), out.data<uint32_t>(), planes, is[2], is[3], os[2], os[3]);
        break;
      case 8:
        upsample(in.data<uint64_t>(), out.data<uint64_t>(), planes, is[2], is[3], os[2], os[3]);
        break;
      default: ctx.fail("unsupported element size");
    }
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
