// cortex_m.requantize: int8 -> int8 at other qparams (requantize_tensor.h); any shape, the
// output keeps the input's shape and dim order.
#include "cortexm/kernels/requantize_tensor.h"

#include "ops/output_requantization.h"
#include "ops/quant/runtime/requantize_codec.h"
#include "program/params_builder.h"

namespace cortexm::ops {

namespace {

RequantizeParams decode(const OpArgs& args, const TensorInfo& input) {
  RequantizeParams p;
  p.size = input.numel();
  p.input_offset = -int32_attr(args, "input_zero_point", -128, 127);
  read_output_requantization(args, "output_zero_point", -128, 127, &p);
  return p;
}

}  // namespace

void register_cortex_m_requantize(OpRegistry& registry) {
  OpSchema s;
  s.name = "cortex_m.requantize.default";
  s.layout_following_inputs = {0};
  s.inputs = {{"input"}};
  s.in_place_input = 0;  // int8 -> int8, one lookup per element
  for (const char* name : {"input_zero_point", "output_zero_point", "output_multiplier",
                           "output_shift"})
    s.attrs.push_back({name, AttrKind::kInt});
  s.attrs.push_back({"activation_min", AttrKind::kInt, false, AttrValue(int64_t{-128})});
  s.attrs.push_back({"activation_max", AttrKind::kInt, false, AttrValue(int64_t{127})});
  s.infer = [](const InferContext& ctx) {
    require_dtype(ctx, 0, {DType::kInt8});
    check_kernel(ctx, requantize_tensor_prepare(decode(ctx, ctx.input(0))));
    TensorInfo out = make_info(DType::kInt8, ctx.input(0).shape);
    out.dim_order = ctx.input(0).dim_order;
    return std::vector<TensorInfo>{out};
  };
  s.kernel = [](const KernelContext& ctx) {
    requantize_tensor(decode(ctx, ctx.input(0).info()), ctx.input(0).data<int8_t>(),
                      ctx.output().data<int8_t>());
  };
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    return program::encoded(fb::KernelId_Requantize,
                            program::encode_requantize(b.fbb(), decode(node, node.input(0))));
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
