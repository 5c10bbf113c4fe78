// aten.upsample_nearest2d.default: NCHW nearest-neighbour resize to output_size (OH, OW). The
// source index is floor(dst * (in / out)) with the ratio in float32, as torch computes it. Any
// dtype; per-tensor qparams pass through (portable::upsample_nearest2d).
#include "cortexm/portable/upsample_nearest2d.h"
#include "ops/data_movement/moved_bytes.h"

namespace cortexm::ops {

void register_aten_upsample_nearest2d(OpRegistry& registry) {
  OpSchema s = moved_bytes_schema("aten.upsample_nearest2d.default", {{"output_size", AttrKind::kInts}});
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    return program::encoded(fb::KernelId_UpsampleNearest2d, fb::CreateUpsampleNearest2dParams(b.fbb()));
  };
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
    return std::vector<TensorInfo>{moved_info(in, {in.shape[0], in.shape[1], size[0], size[1]})};
  };
  s.kernel = [](const KernelContext& ctx) {
    portable::UpsampleNearest2dParams params;
    params.out_h = ctx.ints("output_size")[0];
    params.out_w = ctx.ints("output_size")[1];
    run_moved_bytes(ctx, "upsample_nearest2d", params, portable::upsample_nearest2d_prepare,
                    portable::upsample_nearest2d);
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
