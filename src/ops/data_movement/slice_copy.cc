// aten.slice_copy.Tensor: elements start, start + step, ... < end along `dim`. start/end may be
// None or negative and are clamped to the dim as torch does; step >= 1. Any dtype; per-tensor
// qparams pass through (portable::slice).
#include <limits>

#include "cortexm/portable/slice.h"
#include "ops/portable_call.h"
#include "program/params_builder.h"

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
  OpSchema s;
  s.name = "aten.slice_copy.Tensor";
  s.inputs = {{"self"}};
  s.attrs = {{"dim", AttrKind::kInt, false, AttrValue(int64_t{0})},
             {"start", AttrKind::kInt, true, AttrValue(NoneAttr{})},
             {"end", AttrKind::kInt, true, AttrValue(NoneAttr{})},
             {"step", AttrKind::kInt, false, AttrValue(int64_t{1})}};
  s.is_data_movement = true;
  s.keeps_qparams = true;
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
    TensorInfo out = make_info(in.dtype, shape);
    out.qparams = passthrough_qparams(in);
    return std::vector<TensorInfo>{out};
  };
  s.kernel = [](const KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    portable::SliceParams params;
    params.input = portable_shape(ctx, in.shape());
    params.dim = ctx.i("dim");
    params.start = ctx.is_none("start") ? 0 : ctx.i("start");
    params.end = ctx.is_none("end") ? portable::kSliceEnd : ctx.i("end");
    params.step = ctx.i("step");
    params.element_size = element_size(in);
    check_portable(ctx, "slice", portable::slice_prepare(params));
    portable::slice(params, in.raw(), ctx.output().raw());
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
