// cortex_m.quantized_avg_pool2d: average of the valid taps, arm_avgpool_s8 rounding.
#include "cortexm/kernels/quantized_avg_pool2d.h"

#include "ops/pool/pool_util.h"

namespace cortexm::ops {

void register_cortex_m_quantized_avg_pool2d(OpRegistry& registry) {
  OpSchema s = pool_schema<int8_t>(
      "cortex_m.quantized_avg_pool2d.default", quantized_avg_pool2d_prepare,
      [](const Pool2dParams& p, const int8_t* input, int8_t* output) {
        std::vector<uint8_t> scratch(quantized_avg_pool2d_scratch_size(p, Isa::kScalar) + 1);
        quantized_avg_pool2d(p, input, output, scratch.data());
      },
      fb::KernelId_QuantizedAvgPool2d);
  s.attrs.push_back(scratch_bytes_attr());
  s.infer = [](const InferContext& ctx) {
    check_scratch_bytes(ctx);
    return infer_pool(ctx, quantized_avg_pool2d_prepare);
  };
  s.scratch = [](const NodeContext& node, Isa isa) {
    return quantized_avg_pool2d_scratch_size(decode_pool(node, node.input(0)), isa);
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
