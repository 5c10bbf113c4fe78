// dequantize_per_tensor (quantized_decomposed and its cortex_m twin): (q - zero_point) * scale in
// float32. int8 and int16 run the kernel; int32 and int64 (biases) use the same formula here.
#include "cortexm/kernels/quantize_per_tensor.h"

#include "ops/quant/quant_attrs.h"

namespace cortexm::ops {

void register_dequantize_per_tensor(OpRegistry& registry) {
  OpSchema s = quant_schema(false);
  s.infer = [](const InferContext& ctx) {
    require_dtype(ctx, 0, {DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64});
    if (ctx.input(0).dtype != ctx.dtype("dtype"))
      ctx.fail(std::string("dtype attribute ") + dtype_name(ctx.dtype("dtype")) +
               " does not match the input's " + dtype_name(ctx.input(0).dtype));
    quant_params_from_attrs(ctx, false);
    TensorInfo out = make_info(DType::kFloat32, ctx.input(0).shape);
    out.dim_order = ctx.input(0).dim_order;
    return std::vector<TensorInfo>{out};
  };
  s.kernel = [](const KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    const float scale = static_cast<float>(ctx.f("scale"));
    const int64_t zero_point = ctx.i("zero_point");
    float* out = ctx.output().data<float>();
    const size_t n = static_cast<size_t>(in.numel());
    if (in.dtype() == DType::kInt32) {
      const int32_t* q = in.data<int32_t>();
      for (size_t i = 0; i < n; ++i)
        out[i] = static_cast<float>(int64_t{q[i]} - zero_point) * scale;
      return;
    }
    if (in.dtype() == DType::kInt64) {
      const int64_t* q = in.data<int64_t>();
      for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(q[i] - zero_point) * scale;
      return;
    }
    QuantizeParams p;
    p.scale = scale;
    p.zero_point = static_cast<int32_t>(zero_point);
    p.quant_min = static_cast<int32_t>(ctx.i("quant_min"));
    p.quant_max = static_cast<int32_t>(ctx.i("quant_max"));
    p.dtype = in.dtype() == DType::kInt8 ? QuantDtype::kInt8 : QuantDtype::kInt16;
    dequantize_per_tensor(p, in.raw(), out, n);
  };
  register_with_cortex_m_twin(registry, "dequantize_per_tensor", std::move(s), fb::KernelId_DequantizePerTensor);
}

}  // namespace cortexm::ops
