// cortex_m.quantized_max_pool2d (int8) and quantized_max_pool2d_s16 (int16): maximum of the valid
// taps, then the activation clamp.
#include "cortexm/kernels/quantized_max_pool2d.h"

#include "ops/pool/pool_util.h"

namespace cortexm::ops {

void register_cortex_m_quantized_max_pool2d(OpRegistry& registry) {
  OpSchema s;
  s.name = "cortex_m.quantized_max_pool2d.default";
  s.fuses_activation = true;
  s.inputs = {{"input"}};
  s.attrs = pool_attrs();
  s.infer = [](const InferContext& ctx) { return infer_pool(ctx, quantized_max_pool2d_prepare); };
  s.kernel = [](const KernelContext& ctx) {
    const Pool2dParams p = decode_pool(ctx, ctx.input(0).info());
    const std::vector<int8_t> input = nchw_to_nhwc(ctx.input(0));
    std::vector<int8_t> output(static_cast<size_t>(p.output.elements()));
    quantized_max_pool2d(p, input.data(), output.data());
    nhwc_to_nchw(output, ctx.output());
  };
  s.encode = encode_pool(fb::KernelId_QuantizedMaxPool2d);
  registry.add(std::move(s));
}

void register_cortex_m_quantized_max_pool2d_s16(OpRegistry& registry) {
  OpSchema s;
  s.name = "cortex_m.quantized_max_pool2d_s16.default";
  s.fuses_activation = true;
  s.inputs = {{"input"}};
  s.attrs = pool_attrs(DType::kInt16);
  s.infer = [](const InferContext& ctx) {
    return infer_pool(ctx, quantized_max_pool2d_s16_prepare, DType::kInt16);
  };
  s.kernel = [](const KernelContext& ctx) {
    const Pool2dParams p = decode_pool(ctx, ctx.input(0).info());
    const std::vector<int16_t> input = nchw_to_nhwc_as<int16_t>(ctx.input(0));
    std::vector<int16_t> output(static_cast<size_t>(p.output.elements()));
    quantized_max_pool2d_s16(p, input.data(), output.data());
    nhwc_to_nchw_as(output, ctx.output());
  };
  s.encode = encode_pool(fb::KernelId_QuantizedMaxPool2dS16);
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
