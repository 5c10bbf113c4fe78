// quantized_decomposed.dequantize_per_channel.default: (q - zero_point) * scale in float32 with
// one scale and zero point per index along axis. int8 / int16 runs go through the kernel; int32
// and int64 (biases) use the same formula here.
#include "cortexm/kernels/quantize_per_tensor.h"
#include "ops/quant/quant_attrs.h"

namespace cortexm::ops {

namespace {

std::vector<TensorInfo> infer(const InferContext& ctx) {
  require_dtype(ctx, 0, {DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64});
  const TensorInfo& in = ctx.input(0);
  if (in.rank() < 1) ctx.fail("input is " + info_to_string(in) + ", expected rank >= 1");
  if (in.dtype != ctx.dtype("dtype"))
    ctx.fail(std::string("dtype attribute ") + dtype_name(ctx.dtype("dtype")) +
             " does not match the input's " + dtype_name(in.dtype));
  quant_params_from_attrs(ctx, true, in.rank(), in.shape);
  TensorInfo out = make_info(DType::kFloat32, in.shape);
  out.dim_order = in.dim_order;
  return {out};
}

void kernel(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const QuantDtype dtype = in.dtype() == DType::kInt16 ? QuantDtype::kInt16 : QuantDtype::kInt8;
  const size_t elem = dtype_size(in.dtype());
  const uint8_t* q = static_cast<const uint8_t*>(in.raw());
  float* y = ctx.output().data<float>();
  for_each_channel_run(ctx, in.shape(), dtype, [&](const ChannelRun& r) {
    float* out = y + r.start;
    if (in.dtype() == DType::kInt32) {
      const int32_t* q32 = in.data<int32_t>() + r.start;
      for (int64_t i = 0; i < r.count; ++i)
        out[i] = static_cast<float>(int64_t{q32[i]} - r.zero_point) * r.params.scale;
    } else if (in.dtype() == DType::kInt64) {
      const int64_t* q64 = in.data<int64_t>() + r.start;
      for (int64_t i = 0; i < r.count; ++i)
        out[i] = static_cast<float>(q64[i] - r.zero_point) * r.params.scale;
    } else {
      dequantize_per_tensor(r.params, q + r.start * elem, out, static_cast<size_t>(r.count));
    }
  });
}

}  // namespace

void register_dequantize_per_channel(OpRegistry& registry) {
  OpSchema s = quant_schema(true);
  s.name = "quantized_decomposed.dequantize_per_channel.default";
  s.infer = infer;
  s.kernel = kernel;
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
