// cortex_m.quantized_activation: out = table[input + 128] elementwise; table is int8 [256].
#include "cortexm/kernels/quantized_activation.h"

#include "ops/cortex_m/cortex_m_util.h"

namespace cortexm::ops {

void register_cortex_m_quantized_activation(OpRegistry& registry) {
  OpSchema s;
  s.name = "cortex_m.quantized_activation.default";
  s.inputs = {{"input"}, {"table"}};
  s.infer = [](const InferContext& ctx) {
    require_dtype(ctx, 0, {DType::kInt8});
    require_dtype(ctx, 1, {DType::kInt8});
    if (ctx.input(1).shape != std::vector<int64_t>{kActivationTableSize})
      ctx.fail("table " + shape_to_string(ctx.input(1).shape) + " must be [256]");
    TensorInfo out = make_info(DType::kInt8, ctx.input(0).shape);
    out.dim_order = ctx.input(0).dim_order;
    return std::vector<TensorInfo>{out};
  };
  s.kernel = [](const KernelContext& ctx) {
    ActivationParams p;
    p.count = ctx.input(0).numel();
    p.table = ctx.input(1).data<int8_t>();
    quantized_activation(p, ctx.input(0).data<int8_t>(), ctx.output().data<int8_t>());
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
