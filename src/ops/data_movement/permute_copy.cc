// aten.permute_copy.default: output dim i is input dim dims[i] (portable::permute). Any dtype;
// per-tensor qparams pass through.
#include "cortexm/portable/permute.h"
#include "ops/portable_call.h"
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
  OpSchema s;
  s.name = "aten.permute_copy.default";
  s.inputs = {{"self"}};
  s.attrs = {{"dims", AttrKind::kInts}};
  s.is_data_movement = true;
  s.keeps_qparams = true;
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    return program::encode_permute(b, normalized_dims(node, node.input(0).rank()));
  };
  s.infer = [](const InferContext& ctx) {
    const TensorInfo& in = ctx.input(0);
    portable_shape(ctx, in.shape);  // rank <= 6
    const std::vector<int64_t> dims = normalized_dims(ctx, in.rank());
    std::vector<int64_t> shape;
    for (int64_t d : dims) shape.push_back(in.shape[d]);
    TensorInfo out = make_info(in.dtype, shape);
    out.qparams = passthrough_qparams(in);
    return std::vector<TensorInfo>{out};
  };
  s.kernel = [](const KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    const std::vector<int64_t> dims = normalized_dims(ctx, static_cast<int64_t>(in.shape().size()));
    portable::PermuteParams params;
    params.input = portable_shape(ctx, in.shape());
    for (size_t i = 0; i < dims.size(); ++i) params.perm[i] = static_cast<int32_t>(dims[i]);
    params.element_size = element_size(in);
    check_portable(ctx, "permute", portable::permute_prepare(params));
    portable::permute(params, in.raw(), ctx.output().raw());
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
