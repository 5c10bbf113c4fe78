// cortex_m.quantized_activation_s16: out = the int16 table interpolated at each input
// (quantized_activation_s16.h); table is int16 [513].
#include "cortexm/kernels/quantized_activation_s16.h"

#include "ops/cortex_m/cortex_m_util.h"

namespace cortexm::ops {

void register_cortex_m_quantized_activation_s16(OpRegistry& registry) {
  OpSchema s;
  s.name = "cortex_m.quantized_activation_s16.default";
  s.inputs = {{"input"}, {"table"}};
  s.infer = [](const InferContext& ctx) {
    require_dtype(ctx, 0, {DType::kInt16});
    require_dtype(ctx, 1, {DType::kInt16});
    if (ctx.input(1).shape != std::vector<int64_t>{kActivationS16TableSize})
      ctx.fail("table " + shape_to_string(ctx.input(1).shape) + " must be [513]");
    TensorInfo out = make_info(DType::kInt16, ctx.input(0).shape);
    out.dim_order = ctx.input(0).dim_order;
    return std::vector<TensorInfo>{out};
  };
  s.kernel = [](const KernelContext& ctx) {
    ActivationS16Params p;
    p.count = ctx.input(0).numel();
    p.table = ctx.input(1).data<int16_t>();
    quantized_activation_s16(p, ctx.input(0).data<int16_t>(), ctx.output().data<int16_t>());
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
