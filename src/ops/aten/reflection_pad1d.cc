// aten.reflection_pad1d.default: pads the last dim of a [C, W] or [N, C, W] tensor by mirroring
// (the edge is not repeated); padding = (left, right), each < W; negative pads crop, as torch.
// Any dtype; per-tensor qparams pass through.
#include <cstring>

#include "ops/op_util.h"

namespace cortexm::ops {

namespace {

// Source column of output column j, as torch computes it.
int64_t source_index(int64_t j, int64_t width, int64_t left) {
  int64_t i;
  if (j < left) {
    i = 2 * left - j;
  } else if (j < width + left) {
    i = j;
  } else {
    i = 2 * (width + left - 1) - j;
  }
  return i + std::max<int64_t>(0, -left) - std::max<int64_t>(0, left);
}

template <typename T>
void reflect(const T* in, T* out, int64_t rows, int64_t width, int64_t out_width, int64_t left) {
  std::vector<int64_t> src(out_width);
  for (int64_t j = 0; j < out_width; ++j) src[j] = source_index(j, width, left);
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = in + r * width;
    T* orow = out + r * out_width;
    for (int64_t j = 0; j < out_width; ++j) orow[j] = row[src[j]];
  }
}

}  // namespace

void register_aten_reflection_pad1d(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.reflection_pad1d.default";
  s.inputs = {{"self"}};
  s.attrs = {{"padding", AttrKind::kInts}};
  s.is_data_movement = true;
  s.infer = [](const InferContext& ctx) {
    require_rank(ctx, 0, {2, 3});
    const TensorInfo& in = ctx.input(0);
    const std::vector<int64_t>& padding = ctx.ints("padding");
    if (padding.size() != 2)
      ctx.fail("attribute 'padding' = " + shape_to_string(padding) + " must be (left, right)");
    const int64_t width = in.shape.back(), left = padding[0], right = padding[1];
    if (width < 1) ctx.fail("input " + info_to_string(in) + " has an empty last dim");
    if (left >= width || right >= width)
      ctx.fail("attribute 'padding' = " + shape_to_string(padding) +
               " must be less than the input width " + std::to_string(width));
    const int64_t out_width = width + left + right;
    if (out_width < 1)
      ctx.fail("attribute 'padding' = " + shape_to_string(padding) + " leaves width " +
               std::to_string(out_width) + " of input width " + std::to_string(width));
    for (int64_t j = 0; j < out_width; ++j) {
      const int64_t i = source_index(j, width, left);
      if (i < 0 || i >= width)
        ctx.fail("attribute 'padding' = " + shape_to_string(padding) +
                 " crops and reflects past the input width " + std::to_string(width));
    }
    std::vector<int64_t> shape = in.shape;
    shape.back() = out_width;
    TensorInfo out = make_info(in.dtype, shape);
    out.qparams = passthrough_qparams(in);
    return std::vector<TensorInfo>{out};
  };
  s.kernel = [](const KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    Tensor& out = ctx.output();
    const int64_t width = in.shape().back(), out_width = out.shape().back();
    const int64_t rows = width == 0 ? 0 : in.numel() / width;
    const int64_t left = ctx.ints("padding")[0];
    switch (dtype_size(in.dtype())) {
      case 1: reflect(in.data<uint8_t>(), out.data<uint8_t>(), rows, width, out_width, left); break;
      case 2:
        reflect(in.data<uint16_t>(), out.data<uint16_t>(), rows, width, out_width, left);
        break;
      case 4:
        reflect(in.data<uint32_t>(), out.data<uint32_t>(), rows, width, out_width, left);
        break;
      case 8:
        reflect(in.data<uint64_t>(), out.data<uint64_t>(), rows, width, out_width, left);
        break;
      default: ctx.fail("unsupported element size");
    }
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
