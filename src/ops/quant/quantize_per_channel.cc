// quantized_decomposed.quantize_per_channel.default: the per-tensor arithmetic
// clamp(zero_point + nearbyint(x * (1.0f / scale)), quant_min, quant_max) in float32, with one
// scale and zero point per index along axis. Each run of one channel goes through the kernel.
#include <cfloat>

#include "cortexm/kernels/quantize_per_tensor.h"
#include "ops/quant/quant_attrs.h"

namespace cortexm::ops {

namespace {

std::vector<TensorInfo> infer(const InferContext& ctx) {
  require_dtype(ctx, 0, {DType::kFloat32});
  const TensorInfo& in = ctx.input(0);
  if (in.rank() < 1) ctx.fail("input is " + info_to_string(in) + ", expected rank >= 1");
  const DType dtype = ctx.dtype("dtype");
  if (dtype != DType::kInt8 && dtype != DType::kInt16)
    ctx.fail(std::string("dtype ") + dtype_name(dtype) + " must be int8 or int16");
  TensorInfo out = make_info(dtype, in.shape);
  out.qparams = quant_params_from_attrs(ctx, true, in.rank(), in.shape);
  for (size_t c = 0; c < out.qparams->scales.size(); ++c) {
    const float scale = static_cast<float>(out.qparams->scales[c]);
    if (!(scale > 0.0f) || scale > FLT_MAX)
      ctx.fail("scales[" + std::to_string(c) + "] = " + std::to_string(out.qparams->scales[c]) +
               " is not a finite float32 > 0");
  }
  out.dim_order = in.dim_order;
  return {out};
}

void kernel(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const QuantDtype dtype = ctx.dtype("dtype") == DType::kInt8 ? QuantDtype::kInt8 : QuantDtype::kInt16;
  const size_t elem = dtype_size(ctx.output().dtype());
  const float* x = in.data<float>();
  uint8_t* q = static_cast<uint8_t*>(ctx.output().raw());
  for_each_channel_run(ctx, in.shape(), dtype, [&](const ChannelRun& r) {
    quantize_per_tensor(r.params, x + r.start, q + r.start * elem, static_cast<size_t>(r.count));
  });
}

}  // namespace

void register_quantize_per_channel(OpRegistry& registry) {
  OpSchema s = quant_schema(true);
  s.name = "quantized_decomposed.quantize_per_channel.default";
  s.infer = infer;
  s.kernel = kernel;
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
