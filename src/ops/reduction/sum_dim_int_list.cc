// aten.sum.dim_IntList: sum over the listed dims (negative allowed, [] = every dim); keepdim keeps
// them with size 1. Sums in double, rounded once (portable::sum_f32).
#include "ops/reduction/reduction.h"
#include "program/params_builder.h"

namespace cortexm::ops {

void register_aten_sum_dim_int_list(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.sum.dim_IntList";
  s.inputs = {{"self"}};
  s.attrs = {{"dim", AttrKind::kInts}, {"keepdim", AttrKind::kBool, false, AttrValue(false)}};
  s.infer = infer_reduction;
  s.kernel = [](const KernelContext& ctx) {
    const portable::MeanParams params = reduction_params(ctx);
    check_portable(ctx, "sum", portable::mean_prepare(params));
    portable::sum_f32(params, ctx.input(0).data<float>(), ctx.output().data<float>());
  };
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    return program::encoded(fb::KernelId_Sum,
                            fb::CreateMeanParams(b.fbb(), b.fbb().CreateVector(reduced_dim_list(node))));
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
