// dim_order_ops._clone_dim_order.default: a copy of the logical data whose output is laid out in
// the given dim_order (None = contiguous). dtype, shape and qparams stay the input's; any dtype.
#include "cortexm/portable/copy.h"
#include "ops/portable_call.h"
#include "graph/layout.h"
#include "ops/data_movement/permute_codec.h"
#include "ops/data_movement/view_codec.h"

namespace cortexm::ops {

void register_clone_dim_order(OpRegistry& registry) {
  OpSchema s;
  s.name = "dim_order_ops._clone_dim_order.default";
  s.keeps_element_order = true;
  s.inputs = {{"input"}};
  s.attrs = {{"dim_order", AttrKind::kInts, true, AttrValue(NoneAttr{})},
             {"non_blocking", AttrKind::kBool, false, AttrValue(false)}};
  s.is_data_movement = true;
  s.keeps_qparams = true;
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    // A clone that leaves every element where it is (a channels-last copy of 1 channel) moves
    // nothing: a View, which the planner aliases (is_aliasing_view).
    if (same_bytes(node.input(0), node.output(0))) return program::encode_view(b, node);
    std::vector<int64_t> dims(static_cast<size_t>(node.input(0).rank()));
    for (size_t i = 0; i < dims.size(); ++i) dims[i] = static_cast<int64_t>(i);
    return program::encode_permute(b, dims);
  };
  s.infer = [](const InferContext& ctx) {
    const TensorInfo& in = ctx.input(0);
    TensorInfo out = in;
    out.dim_order.clear();
    if (!ctx.is_none("dim_order")) {
      const std::vector<int64_t>& order = ctx.ints("dim_order");
      std::vector<bool> seen(static_cast<size_t>(in.rank()), false);
      bool ok = static_cast<int64_t>(order.size()) == in.rank();
      for (size_t i = 0; ok && i < order.size(); ++i) {
        ok = order[i] >= 0 && order[i] < in.rank() && !seen[order[i]];
        if (ok) seen[order[i]] = true;
      }
      if (!ok)
        ctx.fail("attribute 'dim_order' = " + shape_to_string(order) +
                 " is not a permutation of the input's " + std::to_string(in.rank()) + " dims");
      out.dim_order = order;
    }
    return std::vector<TensorInfo>{out};
  };
  s.kernel = [](const KernelContext& ctx) {
    // The interpreter keeps every tensor's logical data contiguous, so the clone is a copy.
    const Tensor& in = ctx.input(0);
    portable::CopyParams params;
    params.numel = in.numel();
    params.element_size = element_size(in);
    check_portable(ctx, "copy", portable::copy_prepare(params));
    portable::copy(params, in.raw(), ctx.output().raw());
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
