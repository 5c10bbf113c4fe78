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
  const std::vector<int64_t>& shape = in.shape();
  const int64_t axis = normalize_dim(ctx, "axis", ctx.i("axis"), in.info().rank());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t channels = shape[axis];
  const std::vector<double>& scales = ctx.floats("scales");
  const std::vector<int64_t>& zero_points = ctx.ints("zero_points");
  QuantizeParams p;
  p.quant_min = static_cast<int32_t>(ctx.i("quant_min"));
  p.quant_max = static_cast<int32_t>(ctx.i("quant_max"));
  p.dtype = in.dtype() == DType::kInt16 ? QuantDtype::kInt16 : QuantDtype::kInt8;
  const size_t elem = dtype_size(in.dtype());
  const uint8_t* q = static_cast<const uint8_t*>(in.raw());
  float* y = ctx.output().data<float>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < channels; ++c) {
      const float scale = static_cast<float>(scales[c]);
      const int64_t start = (o * channels + c) * inner;
      if (in.dtype() == DType::kInt32) {
        const int32_t* q32 = in.data<int32_t>() + start;
        for (int64_t i = 0; i < inner; ++i)
          y[start + i] = static_cast<float>(int64_t{q32[i]} - zero_points[c]) * scale;
        continue;
      }
      if (in.dtype() == DType::kInt64) {
        const int64_t* q64 = in.data<int64_t>() + start;
        for (int64_t i = 0; i < inner; ++i)
          y[start + i] = static_cast<float>(q64[i] - zero_points[c]) * scale;
        continue;
      }
      p.scale = scale;
      p.zero_point = static_cast<int32_t>(zero_points[c]);
      dequantize_per_tensor(p, q + start * elem, y + start, static_cast<size_t>(inner));
    }
  }
}

}  // namespace

void register_dequantize_per_channel(OpRegistry& registry) {
  OpSchema s;
  s.name = "quantized_decomposed.dequantize_per_channel.default";
  s.inputs = {{"input"}};
  s.attrs = per_channel_quant_attrs();
  s.infer = infer;
  s.kernel = kernel;
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
