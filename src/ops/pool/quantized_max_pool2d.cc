// cortex_m.quantized_max_pool2d (int8) and quantized_max_pool2d_s16 (int16): maximum of the valid
// taps, then the activation clamp.
#include "cortexm/kernels/quantized_max_pool2d.h"

#include "ops/pool/pool_util.h"

namespace cortexm::ops {

void register_cortex_m_quantized_max_pool2d(OpRegistry& registry) {
  registry.add(pool_schema<int8_t>("cortex_m.quantized_max_pool2d.default", quantized_max_pool2d_prepare,
                                   quantized_max_pool2d, fb::KernelId_QuantizedMaxPool2d));
}

void register_cortex_m_quantized_max_pool2d_s16(OpRegistry& registry) {
  registry.add(pool_schema<int16_t>("cortex_m.quantized_max_pool2d_s16.default",
                                    quantized_max_pool2d_s16_prepare, quantized_max_pool2d_s16,
                                    fb::KernelId_QuantizedMaxPool2dS16));
}

}  // namespace cortexm::ops
