// cortex_m.quantized_activation: out = table[input + 128] elementwise; table is int8 [256].
// cortex_m.quantized_activation_s16: out = the int16 table interpolated at each input
// (quantized_activation_s16.h); table is int16 [513]. One descriptor template for both.
#include "cortexm/kernels/quantized_activation.h"
#include "cortexm/kernels/quantized_activation_s16.h"
#include "ops/cortex_m_util.h"
#include "ops/activation/runtime/activation_codec.h"
#include "program/params_builder.h"

namespace cortexm::ops {

namespace {

template <class P, class T, int32_t kTableSize, void (*Run)(const P&, const T*, T*)>
OpSchema activation_schema(const char* name, fb::KernelId kernel_id) {
  constexpr DType dtype = sizeof(T) == 1 ? DType::kInt8 : DType::kInt16;
  OpSchema s;
  s.name = name;
  s.inputs = {{"input"}, {"table"}};
  s.in_place_input = 0;  // one lookup per element; the table is a constant
  if (dtype == DType::kInt8) s.layout_following_inputs = {0};  // (SinkDimOrderClones: int8 only yet)
  s.infer = [](const InferContext& ctx) {
    require_dtype(ctx, 0, {dtype});
    require_dtype(ctx, 1, {dtype});
    if (ctx.input(1).shape != std::vector<int64_t>{kTableSize})
      ctx.fail("table " + shape_to_string(ctx.input(1).shape) + " must be [" +
               std::to_string(kTableSize) + "]");
    TensorInfo out = make_info(dtype, ctx.input(0).shape);
    out.dim_order = ctx.input(0).dim_order;
    return std::vector<TensorInfo>{out};
  };
  s.kernel = [](const KernelContext& ctx) {
    P p;
    p.count = ctx.input(0).numel();
    p.table = ctx.input(1).data<T>();
    Run(p, ctx.input(0).data<T>(), ctx.output().data<T>());
  };
  s.encode = [kernel_id](program::ParamsBuilder& b, const NodeContext&) {
    return program::encoded(kernel_id, program::encode_activation(b.fbb()));
  };
  return s;
}

}  // namespace

void register_cortex_m_quantized_activation(OpRegistry& registry) {
  registry.add(activation_schema<ActivationParams, int8_t, kActivationTableSize, quantized_activation>(
      "cortex_m.quantized_activation.default", fb::KernelId_QuantizedActivation));
}

void register_cortex_m_quantized_activation_s16(OpRegistry& registry) {
  registry.add(activation_schema<ActivationS16Params, int16_t, kActivationS16TableSize,
                                 quantized_activation_s16>("cortex_m.quantized_activation_s16.default",
                                                           fb::KernelId_QuantizedActivationS16));
}

}  // namespace cortexm::ops
