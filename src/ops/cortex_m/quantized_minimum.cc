// cortex_m.quantized_minimum: int8 minimum with numpy broadcasting, inputs rescaled to the output's
// qparams through quantized_add's common scale.
#include "cortexm/kernels/quantized_minimum.h"

#include "ops/cortex_m/binary_util.h"

namespace cortexm::ops {

namespace {

MinMaxParams decode(const OpArgs& args, const TensorInfo& a, const TensorInfo& b) {
  MinMaxParams p;
  p.shape = broadcast_of(args, a, b);
  p.lhs_offset = -int32_attr(args, "self_zero_point", -128, 127);
  p.lhs_multiplier = int32_attr(args, "self_multiplier", 0, INT32_MAX);
  p.lhs_shift = int32_attr(args, "self_shift", -31, 30);
  p.rhs_offset = -int32_attr(args, "other_zero_point", -128, 127);
  p.rhs_multiplier = int32_attr(args, "other_multiplier", 0, INT32_MAX);
  p.rhs_shift = int32_attr(args, "other_shift", -31, 30);
  p.output_offset = int32_attr(args, "output_zero_point", -128, 127);
  p.output_multiplier = int32_attr(args, "output_multiplier", 0, INT32_MAX);
  p.output_shift = int32_attr(args, "output_shift", -31, 30);
  p.activation_min = int32_attr(args, "activation_min", -128, 127);
  p.activation_max = int32_attr(args, "activation_max", -128, 127);
  return p;
}

}  // namespace

void register_cortex_m_quantized_minimum(OpRegistry& registry) {
  OpSchema s;
  s.name = "cortex_m.quantized_minimum.default";
  s.inputs = {{"self"}, {"other"}};
  for (const char* name : {"self_zero_point", "self_multiplier", "self_shift", "other_zero_point",
                           "other_multiplier", "other_shift", "output_zero_point",
                           "output_multiplier", "output_shift"})
    s.attrs.push_back({name, AttrKind::kInt});
  s.attrs.push_back({"activation_min", AttrKind::kInt, false, AttrValue(int64_t{-128})});
  s.attrs.push_back({"activation_max", AttrKind::kInt, false, AttrValue(int64_t{127})});
  s.infer = [](const InferContext& ctx) {
    auto out = infer_int8_binary(ctx);
    check_kernel(ctx, quantized_minimum_prepare(decode(ctx, ctx.input(0), ctx.input(1))));
    return out;
  };
  s.kernel = [](const KernelContext& ctx) {
    quantized_minimum(decode(ctx, ctx.input(0).info(), ctx.input(1).info()),
                     ctx.input(0).data<int8_t>(), ctx.input(1).data<int8_t>(),
                     ctx.output().data<int8_t>());
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
