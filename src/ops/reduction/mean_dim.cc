// aten.mean.dim: mean over the listed dims (negative allowed, [] = every dim); keepdim keeps them
// with size 1. Sums in double; an empty reduction gives NaN, as in torch (portable::mean_f32).
#include "ops/reduction/reduction.h"
#include "program/params_builder.h"

namespace cortexm::ops {

namespace {

void kernel(const KernelContext& ctx) {
  const portable::MeanParams params = reduction_params(ctx);
  check_portable(ctx, "mean", portable::mean_prepare(params));
  portable::mean_f32(params, ctx.input(0).data<float>(), ctx.output().data<float>());
}

}  // namespace

void register_aten_mean_dim(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.mean.dim";
  s.inputs = {{"self"}};
  s.attrs = {{"dim", AttrKind::kInts}, {"keepdim", AttrKind::kBool, false, AttrValue(false)}};
  s.infer = infer_reduction;
  s.kernel = kernel;
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    return program::encoded(fb::KernelId_Mean,
                            fb::CreateMeanParams(b.fbb(), b.fbb().CreateVector(reduced_dim_list(node))));
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
