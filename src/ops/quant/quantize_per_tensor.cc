// quantize_per_tensor (quantized_decomposed and its cortex_m twin, one arithmetic):
// clamp(zero_point + nearbyint(x * (1.0f / scale)), quant_min, quant_max), float32 math.
#include "cortexm/kernels/quantize_per_tensor.h"

#include "ops/quant/quant_attrs.h"

namespace cortexm::ops {

void register_quantize_per_tensor(OpRegistry& registry) {
  OpSchema s = quant_schema(false);
  s.infer = [](const InferContext& ctx) {
    require_dtype(ctx, 0, {DType::kFloat32});
    const DType dtype = ctx.dtype("dtype");
    if (dtype != DType::kInt8 && dtype != DType::kInt16)
      ctx.fail(std::string("dtype ") + dtype_name(dtype) + " must be int8 or int16");
    TensorInfo out = make_info(dtype, ctx.input(0).shape);
    out.qparams = quant_params_from_attrs(ctx, false);
    out.dim_order = ctx.input(0).dim_order;
    return std::vector<TensorInfo>{out};
  };
  s.kernel = [](const KernelContext& ctx) {
    const QuantizeParams p = quantize_params(ctx);
    const Error error = quantize_per_tensor_prepare(p);
    if (!error.ok()) ctx.fail(std::string(error.argument) + " " + error.requirement);
    quantize_per_tensor(p, ctx.input(0).data<float>(), ctx.output().raw(),
                        static_cast<size_t>(ctx.input(0).numel()));
  };
  // Every variant stores a block of 1 or 2-byte elements after loading the floats it is made of,
  // in element order (kernels/src/quantize_per_tensor.cc), so int8 / int16 may narrow over the float.
  s.in_place_input = 0;
  s.in_place_narrowing = true;
  s.folds_constant_inputs = true;
  register_with_cortex_m_twin(registry, "quantize_per_tensor", std::move(s), fb::KernelId_QuantizePerTensor);
}

}  // namespace cortexm::ops
