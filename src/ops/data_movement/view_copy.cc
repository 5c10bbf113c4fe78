// aten.view_copy.default: the same elements in a new shape (one dim may be -1). Any dtype.
#include "ops/op_util.h"
#include "ops/data_movement/view_codec.h"

namespace cortexm::ops {

namespace {

std::vector<int64_t> resolve_size(const OpArgs& args, const TensorInfo& input) {
  std::vector<int64_t> size = args.ints("size");
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] == -1) {
      if (infer_at >= 0) args.fail("size " + shape_to_string(size) + " has more than one -1");
      infer_at = static_cast<int64_t>(i);
    } else if (size[i] < 0) {
      args.fail("size " + shape_to_string(size) + " has a negative dim");
    } else {
      known *= size[i];
    }
  }
  if (infer_at >= 0) {
    if (known == 0 || input.numel() % known)
      args.fail("cannot view " + shape_to_string(input.shape) + " as " + shape_to_string(size));
    size[infer_at] = input.numel() / known;
  }
  if (TensorInfo{input.dtype, size}.numel() != input.numel())
    args.fail("cannot view " + shape_to_string(input.shape) + " (" + std::to_string(input.numel()) +
              " elements) as " + shape_to_string(size));
  return size;
}

}  // namespace

void register_aten_view_copy(OpRegistry& registry) {
  OpSchema s = view_schema("aten.view_copy.default", {"size", AttrKind::kInts});
  s.infer = [](const InferContext& ctx) {
    return std::vector<TensorInfo>{view_info(ctx.input(0), resolve_size(ctx, ctx.input(0)))};
  };
  s.kernel = [](const KernelContext& ctx) {
    ctx.output() = ctx.input(0).reshaped(ctx.output().shape());
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
