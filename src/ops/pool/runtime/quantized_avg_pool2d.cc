// QuantizedAvgPool2d: NHWC int8, arm_avgpool_s8 rounding.
#include "cortexm/kernels/quantized_avg_pool2d.h"

#include "cortexm/kernels/kernel_isa.h"
#include "runtime/ops/op_paths.h"
#include "ops/pool/runtime/pool_decode.h"

namespace cortexm::runtime {

Status prepare_quantized_avg_pool2d(const OpContext& ctx) {
  CORTEXM_RETURN_IF_STATUS(prepare_pool(ctx, quantized_avg_pool2d_prepare));
  return require_scratch(ctx, quantized_avg_pool2d_scratch_size(decode_pool(ctx), kKernelIsa));
}

void run_avg_pool2d_with(const OpContext& ctx, AvgPool2dKernel kernel) {
  const Pool2dParams p = decode_pool(ctx);
  kernel(p, reinterpret_cast<const int8_t*>(ctx.input(0).data), reinterpret_cast<int8_t*>(ctx.output().data),
         ctx.scratch(quantized_avg_pool2d_scratch_size(p, kKernelIsa)));
}

void run_quantized_avg_pool2d(const OpContext& ctx) { run_avg_pool2d_with(ctx, quantized_avg_pool2d); }

}  // namespace cortexm::runtime
