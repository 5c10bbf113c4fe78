// aten._softmax / aten._log_softmax on float32 along any dim: subtracts the max first, sums the
// exponentials in double (portable::softmax_f32 / log_softmax_f32). half_to_float must be False.
#pragma once

#include "cortexm/portable/softmax.h"
#include "ops/portable_call.h"
#include "program/params_builder.h"

namespace cortexm::ops {

inline void register_softmax_op(OpRegistry& registry, const std::string& name, bool log) {
  OpSchema s;
  s.name = name;
  s.inputs = {{"self"}};
  s.attrs = {{"dim", AttrKind::kInt}, {"half_to_float", AttrKind::kBool, false, AttrValue(false)}};
  s.infer = [](const InferContext& ctx) {
    require_dtype(ctx, 0, {DType::kFloat32});
    normalize_dim(ctx, "dim", ctx.i("dim"), ctx.input(0).rank());
    portable_shape(ctx, ctx.input(0).shape);  // rank <= 6
    if (ctx.b("half_to_float")) ctx.fail("attribute 'half_to_float' = True is not supported");
    return same_as_input(ctx);
  };
  s.encode = [log](program::ParamsBuilder& b, const NodeContext& node) {
    const int64_t dim = normalize_dim(node, "dim", node.i("dim"), node.input(0).rank());
    const auto params = fb::CreateSoftmaxParams(b.fbb(), static_cast<int32_t>(dim));
    return program::encoded(log ? fb::KernelId_LogSoftmax : fb::KernelId_Softmax, params);
  };
  s.kernel = [log](const KernelContext& ctx) {
    portable::SoftmaxParams params;
    params.input = portable_shape(ctx, ctx.input(0).shape());
    params.dim = ctx.i("dim");
    check_portable(ctx, log ? "log_softmax" : "softmax", portable::softmax_prepare(params));
    if (log)
      portable::log_softmax_f32(params, ctx.input(0).data<float>(), ctx.output().data<float>());
    else
      portable::softmax_f32(params, ctx.input(0).data<float>(), ctx.output().data<float>());
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
