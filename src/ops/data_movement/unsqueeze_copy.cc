// aten.unsqueeze_copy.default: inserts a size-1 dim at `dim` in [-rank - 1, rank]. Any dtype; a
// view; per-tensor qparams pass through.
#include "ops/op_util.h"
#include "ops/data_movement/view_codec.h"

namespace cortexm::ops {

void register_aten_unsqueeze_copy(OpRegistry& registry) {
  OpSchema s = view_schema("aten.unsqueeze_copy.default", {"dim", AttrKind::kInt});
  s.infer = [](const InferContext& ctx) {
    const TensorInfo& in = ctx.input(0);
    const int64_t d = normalize_dim(ctx, "dim", ctx.i("dim"), in.rank() + 1);
    std::vector<int64_t> shape = in.shape;
    shape.insert(shape.begin() + d, 1);
    return std::vector<TensorInfo>{view_info(in, shape)};
  };
  s.kernel = [](const KernelContext& ctx) {
    ctx.output() = ctx.input(0).reshaped(ctx.output().shape());
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
