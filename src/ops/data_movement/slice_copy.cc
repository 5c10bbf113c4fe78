// aten.slice_copy.Tensor: elements start, start + step, ... < end along `dim`. start/end may be
// None or negative and are clamped to the dim as torch does; step >= 1. Any dtype; per-tensor
// qparams pass through (portable::slice).
#include <limits>

#include "cortexm/portable/slice.h"
#include "ops/data_movement/moved_bytes.h"

namespace cortexm::ops {

namespace {

struct Slice {
  int64_t dim, start, length, step;
};

Slice resolve(const OpArgs& args, const std::vector<int64_t>& shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0) args.fail("cannot slice a rank-0 tensor");
  Slice s;
  s.dim = normalize_dim(args, "dim", args.i("dim"), rank);
  s.step = args.i("step");
  if (s.step < 1) args.fail("attribute 'step' = " + std::to_string(s.step) + " must be >= 1");
  const int64_t size = shape[s.dim];
  int64_t start = args.is_none("start") ? 0 : args.i("start");
  int64_t end = args.is_none("end") ? std::numeric_limits<int64_t>::max() : args.i("end");
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = start < 0 ? 0 : (start > size ? size : start);
  end = end < start ? start : (end > size ? size : end);
  s.start = start;
  s.length = (end - start + s.step - 1) / s.step;
  return s;
}

}  // namespace

void register_aten_slice_copy(OpRegistry& registry) {
  OpSchema s = moved_bytes_schema("aten.slice_copy.Tensor",
                                  {{"dim", AttrKind::kInt, false, AttrValue(int64_t{0})},
                                   {"start", AttrKind::kInt, true, AttrValue(NoneAttr{})},
                                   {"end", AttrKind::kInt, true, AttrValue(NoneAttr{})},
                                   {"step", AttrKind::kInt, false, AttrValue(int64_t{1})}});
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    const Slice sl = resolve(node, node.input(0).shape);
    return program::encoded(fb::KernelId_Slice, fb::CreateSliceParams(b.fbb(), static_cast<int32_t>(sl.dim),
                                                                      sl.start, sl.step));
  };
  s.infer = [](const InferContext& ctx) {
    const TensorInfo& in = ctx.input(0);
    const Slice sl = resolve(ctx, in.shape);
    portable_shape(ctx, in.shape);  // rank <= 6
    std::vector<int64_t> shape = in.shape;
    shape[sl.dim] = sl.length;
    return std::vector<TensorInfo>{moved_info(in, shape)};
  };
  s.kernel = [](const KernelContext& ctx) {
    portable::SliceParams params;
    params.dim = ctx.i("dim");
    params.start = ctx.is_none("start") ? 0 : ctx.i("start");
    params.end = ctx.is_none("end") ? portable::kSliceEnd : ctx.i("end");
    params.step = ctx.i("step");
    run_moved_bytes(ctx, "slice", params, portable::slice_prepare, portable::slice);
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
