// aten.split_with_sizes_copy.default: one output per entry of split_sizes (which sum to the size
// of `dim`), consecutive along `dim`, each a portable::slice. Any dtype; per-tensor qparams pass
// through.
#include "cortexm/portable/split_with_sizes.h"
#include "ops/data_movement/moved_bytes.h"

namespace cortexm::ops {

namespace {

int64_t resolve_dim(const OpArgs& args, const std::vector<int64_t>& shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0) args.fail("cannot split a rank-0 tensor");
  const int64_t dim = normalize_dim(args, "dim", args.i("dim"), rank);
  const std::vector<int64_t>& sizes = args.ints("split_sizes");
  if (sizes.empty()) args.fail("attribute 'split_sizes' is empty");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) args.fail("attribute 'split_sizes' = " + shape_to_string(sizes) +
                         " has a negative size");
    total += s;
  }
  if (total != shape[dim])
    args.fail("attribute 'split_sizes' = " + shape_to_string(sizes) + " sums to " +
              std::to_string(total) + ", dim " + std::to_string(dim) + " has size " +
              std::to_string(shape[dim]));
  return dim;
}

}  // namespace

void register_aten_split_with_sizes_copy(OpRegistry& registry) {
  OpSchema s = moved_bytes_schema("aten.split_with_sizes_copy.default",
                                  {{"split_sizes", AttrKind::kInts},
                                   {"dim", AttrKind::kInt, false, AttrValue(int64_t{0})}});
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    const int64_t dim = resolve_dim(node, node.input(0).shape);
    return program::encoded(fb::KernelId_Split, fb::CreateSplitParams(b.fbb(), static_cast<int32_t>(dim)));
  };
  s.infer = [](const InferContext& ctx) {
    const TensorInfo& in = ctx.input(0);
    const int64_t dim = resolve_dim(ctx, in.shape);
    portable_shape(ctx, in.shape);  // rank <= 6
    std::vector<TensorInfo> outs;
    for (int64_t size : ctx.ints("split_sizes")) {
      std::vector<int64_t> shape = in.shape;
      shape[dim] = size;
      outs.push_back(moved_info(in, shape));
    }
    return outs;
  };
  s.kernel = [](const KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    const std::vector<int64_t>& sizes = ctx.ints("split_sizes");
    portable::SplitWithSizesParams params;
    params.input = portable_shape(ctx, in.shape());
    params.dim = ctx.i("dim");
    params.split_sizes = sizes.data();
    params.num_outputs = static_cast<int32_t>(sizes.size());
    params.element_size = element_size(in);
    check_portable(ctx, "split_with_sizes", portable::split_with_sizes_prepare(params));
    std::vector<void*> outputs;
    for (size_t k = 0; k < sizes.size(); ++k) outputs.push_back(ctx.output(k).raw());
    portable::split_with_sizes(params, in.raw(), outputs.data());
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
