// aten.permute_copy.default: output dim i is input dim dims[i] (portable::permute). Any dtype;
// per-tensor qparams pass through.
#include "cortexm/portable/permute.h"
#include "graph/layout.h"
#include "ops/data_movement/moved_bytes.h"
#include "ops/data_movement/permute_codec.h"

namespace cortexm::ops {

namespace {

std::vector<int64_t> normalized_dims(const OpArgs& args, int64_t rank) {
  std::vector<int64_t> dims = args.ints("dims");
  if (static_cast<int64_t>(dims.size()) != rank)
    args.fail("attribute 'dims' = " + shape_to_string(dims) + " has " +
              std::to_string(dims.size()) + " entries, the input has rank " +
              std::to_string(rank));
  std::vector<bool> seen(dims.size(), false);
  for (int64_t& d : dims) {
    d = normalize_dim(args, "dims", d, rank);
    if (seen[d]) args.fail("attribute 'dims' = " + shape_to_string(args.ints("dims")) +
                           " repeats dim " + std::to_string(d));
    seen[d] = true;
  }
  return dims;
}

}  // namespace

void register_aten_permute_copy(OpRegistry& registry) {
  OpSchema s = moved_bytes_schema("aten.permute_copy.default", {{"dims", AttrKind::kInts}});
  // Planned in place of its input when it moves only size-1 dims (graph/layout.h).
  s.keeps_bytes = [](const NodeContext& node) {
    return permute_keeps_bytes(node.input(0), node.output(0), node.ints("dims"));
  };
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    return program::encode_permute(b, normalized_dims(node, node.input(0).rank()));
  };
  s.infer = [](const InferContext& ctx) {
    const TensorInfo& in = ctx.input(0);
    portable_shape(ctx, in.shape);  // rank <= 6
    const std::vector<int64_t> dims = normalized_dims(ctx, in.rank());
    std::vector<int64_t> shape;
    for (int64_t d : dims) shape.push_back(in.shape[d]);
    return std::vector<TensorInfo>{moved_info(in, shape)};
  };
  s.kernel = [](const KernelContext& ctx) {
    const std::vector<int64_t> dims =
        normalized_dims(ctx, static_cast<int64_t>(ctx.input(0).shape().size()));
    portable::PermuteParams params;
    for (size_t i = 0; i < dims.size(); ++i) params.perm[i] = static_cast<int32_t>(dims[i]);
    run_moved_bytes(ctx, "permute", params, portable::permute_prepare, portable::permute);
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
