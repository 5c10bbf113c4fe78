// cortex_m.quantized_avg_pool2d: average of the valid taps, arm_avgpool_s8 rounding.
#include "cortexm/kernels/quantized_avg_pool2d.h"

#include "ops/pool/pool_util.h"

namespace cortexm::ops {

void register_cortex_m_quantized_avg_pool2d(OpRegistry& registry) {
  OpSchema s;
  s.name = "cortex_m.quantized_avg_pool2d.default";
  s.fuses_activation = true;
  s.inputs = {{"input"}};
  s.attrs = pool_attrs();
  s.attrs.push_back(scratch_bytes_attr());
  s.infer = [](const InferContext& ctx) {
    check_scratch_bytes(ctx);
    return infer_pool(ctx, quantized_avg_pool2d_prepare);
  };
  s.kernel = [](const KernelContext& ctx) {
    const Pool2dParams p = decode_pool(ctx, ctx.input(0).info());
    const std::vector<int8_t> input = nchw_to_nhwc(ctx.input(0));
    std::vector<int8_t> output(static_cast<size_t>(p.output.elements()));
    std::vector<uint8_t> scratch(quantized_avg_pool2d_scratch_size(p, Isa::kScalar) + 1);
    quantized_avg_pool2d(p, input.data(), output.data(), scratch.data());
    nhwc_to_nchw(output, ctx.output());
  };
  s.encode = encode_pool(fb::KernelId_QuantizedAvgPool2d);
  s.scratch = [](const NodeContext& node, Isa isa) {
    return quantized_avg_pool2d_scratch_size(decode_pool(node, node.input(0)), isa);
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
