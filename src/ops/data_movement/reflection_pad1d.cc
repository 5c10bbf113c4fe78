// aten.reflection_pad1d.default: pads the last dim of a [C, W] or [N, C, W] tensor by mirroring
// (the edge is not repeated); padding = (left, right), each < W; negative pads crop, as torch.
// Any dtype; per-tensor qparams pass through (portable::reflection_pad1d).
#include "cortexm/portable/reflection_pad1d.h"
#include "ops/data_movement/moved_bytes.h"

namespace cortexm::ops {

void register_aten_reflection_pad1d(OpRegistry& registry) {
  OpSchema s = moved_bytes_schema("aten.reflection_pad1d.default", {{"padding", AttrKind::kInts}});
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    const std::vector<int64_t>& padding = node.ints("padding");
    return program::encoded(fb::KernelId_ReflectionPad1d,
                            fb::CreateReflectionPad1dParams(b.fbb(), static_cast<int32_t>(padding[0]),
                                                            static_cast<int32_t>(padding[1])));
  };
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
    if (!portable::reflection_stays_inside(width, left, right))
      ctx.fail("attribute 'padding' = " + shape_to_string(padding) +
               " crops and reflects past the input width " + std::to_string(width));
    std::vector<int64_t> shape = in.shape;
    shape.back() = out_width;
    return std::vector<TensorInfo>{moved_info(in, shape)};
  };
  s.kernel = [](const KernelContext& ctx) {
    portable::ReflectionPad1dParams params;
    params.left = ctx.ints("padding")[0];
    params.right = ctx.ints("padding")[1];
    run_moved_bytes(ctx, "reflection_pad1d", params, portable::reflection_pad1d_prepare,
                    portable::reflection_pad1d);
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
