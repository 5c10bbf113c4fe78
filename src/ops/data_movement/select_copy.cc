// aten.select_copy.int: the slice at `index` (negative counts from the end) of `dim`, which is
// removed. Any dtype; per-tensor qparams pass through (portable::select).
#include "cortexm/portable/select.h"
#include "ops/data_movement/moved_bytes.h"

namespace cortexm::ops {

namespace {

// (dim, index), both normalized.
std::pair<int64_t, int64_t> resolve(const OpArgs& args, const std::vector<int64_t>& shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0) args.fail("cannot select from a rank-0 tensor");
  const int64_t dim = normalize_dim(args, "dim", args.i("dim"), rank);
  const int64_t size = shape[dim];
  int64_t index = args.i("index");
  if (index < -size || index >= size)
    args.fail("attribute 'index' = " + std::to_string(index) + " is out of range for dim " +
              std::to_string(dim) + " of size " + std::to_string(size));
  return {dim, index < 0 ? index + size : index};
}

}  // namespace

void register_aten_select_copy(OpRegistry& registry) {
  OpSchema s = moved_bytes_schema("aten.select_copy.int",
                                  {{"dim", AttrKind::kInt}, {"index", AttrKind::kInt}});
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    const auto [dim, index] = resolve(node, node.input(0).shape);
    return program::encoded(fb::KernelId_Select,
                            fb::CreateSelectParams(b.fbb(), static_cast<int32_t>(dim), index));
  };
  s.infer = [](const InferContext& ctx) {
    const TensorInfo& in = ctx.input(0);
    const int64_t dim = resolve(ctx, in.shape).first;
    portable_shape(ctx, in.shape);  // rank <= 6
    std::vector<int64_t> shape = in.shape;
    shape.erase(shape.begin() + dim);
    return std::vector<TensorInfo>{moved_info(in, shape)};
  };
  s.kernel = [](const KernelContext& ctx) {
    portable::SelectParams params;
    params.dim = ctx.i("dim");
    params.index = ctx.i("index");
    run_moved_bytes(ctx, "select", params, portable::select_prepare, portable::select);
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
