// cortex_m.quantized_mul_s16: arm_elementwise_mul_s16 arithmetic (symmetric int16, zero point 0)
// with numpy broadcasting.
#include "cortexm/kernels/quantized_mul_s16.h"

#include "ops/cortex_m/binary_util.h"

namespace cortexm::ops {

namespace {

MulS16Params decode(const OpArgs& args, const TensorInfo& a, const TensorInfo& b) {
  MulS16Params p;
  p.shape = broadcast_of(args, a, b);
  p.output_multiplier = int32_attr(args, "output_multiplier", 0, INT32_MAX);
  p.output_shift = int32_attr(args, "output_shift", -31, 30);
  p.activation_min = int32_attr(args, "activation_min", -32768, 32767);
  p.activation_max = int32_attr(args, "activation_max", -32768, 32767);
  return p;
}

}  // namespace

void register_cortex_m_quantized_mul_s16(OpRegistry& registry) {
  OpSchema s;
  s.name = "cortex_m.quantized_mul_s16.default";
  s.inputs = {{"self"}, {"other"}};
  for (const char* name : {"output_multiplier", "output_shift"})
    s.attrs.push_back({name, AttrKind::kInt});
  s.attrs.push_back({"activation_min", AttrKind::kInt, false, AttrValue(int64_t{-32768})});
  s.attrs.push_back({"activation_max", AttrKind::kInt, false, AttrValue(int64_t{32767})});
  s.infer = [](const InferContext& ctx) {
    auto out = infer_binary(ctx, DType::kInt16);
    check_kernel(ctx, quantized_mul_s16_prepare(decode(ctx, ctx.input(0), ctx.input(1))));
    return out;
  };
  s.kernel = [](const KernelContext& ctx) {
    quantized_mul_s16(decode(ctx, ctx.input(0).info(), ctx.input(1).info()),
                      ctx.input(0).data<int16_t>(), ctx.input(1).data<int16_t>(),
                      ctx.output().data<int16_t>());
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
