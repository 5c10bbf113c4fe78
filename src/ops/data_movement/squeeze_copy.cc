// aten.squeeze_copy.dims: removes the listed dims that have size 1 (a listed dim of another size
// stays, as in torch). Any dtype; a view; per-tensor qparams pass through.
#include "ops/op_util.h"
#include "ops/data_movement/view_codec.h"

namespace cortexm::ops {

void register_aten_squeeze_copy(OpRegistry& registry) {
  OpSchema s = view_schema("aten.squeeze_copy.dims", {"dim", AttrKind::kInts});
  s.infer = [](const InferContext& ctx) {
    const TensorInfo& in = ctx.input(0);
    const int64_t rank = in.rank();
    std::vector<bool> listed(rank == 0 ? 1 : rank, false);
    for (int64_t d : ctx.ints("dim")) {
      const int64_t n = normalize_dim(ctx, "dim", d, rank);
      if (listed[n])
        ctx.fail("attribute 'dim' = " + shape_to_string(ctx.ints("dim")) + " repeats dim " +
                 std::to_string(n));
      listed[n] = true;
    }
    std::vector<int64_t> shape;
    for (int64_t d = 0; d < rank; ++d)
      if (!(listed[d] && in.shape[d] == 1)) shape.push_back(in.shape[d]);
    return std::vector<TensorInfo>{view_info(in, shape)};
  };
  s.kernel = [](const KernelContext& ctx) {
    ctx.output() = ctx.input(0).reshaped(ctx.output().shape());
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
