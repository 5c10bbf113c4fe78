// aten.unsqueeze_copy.default: inserts a size-1 dim at `dim` in [-rank - 1, rank]. Any dtype; a
// view; per-tensor qparams pass through.
#include "ops/op_util.h"
#include "ops/data_movement/view_codec.h"

namespace cortexm::ops {

void register_aten_unsqueeze_copy(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.unsqueeze_copy.default";
  s.inputs = {{"self"}};
  s.attrs = {{"dim", AttrKind::kInt}};
  s.is_view = true;
  s.keeps_element_order = true;
  s.layout_following_inputs = {0};
  s.is_data_movement = true;
  s.keeps_qparams = true;
  s.encode = program::encode_view;
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
