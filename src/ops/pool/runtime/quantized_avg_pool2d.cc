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

namespace {

struct AvgPool2dState {
  Pool2dParams params;
  DataRef input, output, scratch;
};

void init_avg_pool2d(const OpContext& ctx, AvgPool2dState* s) {
  s->params = decode_pool(ctx);
  s->input = ctx.input_ref(0);
  s->output = ctx.output_ref();
  s->scratch = ctx.scratch_ref(quantized_avg_pool2d_scratch_size(s->params, kKernelIsa));
}

}  // namespace

extern const OpState quantized_avg_pool2d_state = kOpState<AvgPool2dState, init_avg_pool2d, 104>;

void run_avg_pool2d_with(const OpContext& ctx, AvgPool2dKernel kernel) {
  const auto& s = state_of<AvgPool2dState>(ctx);
  kernel(s.params, ctx.data_as<const int8_t>(s.input), ctx.data_as<int8_t>(s.output), ctx.data(s.scratch));
}

void run_quantized_avg_pool2d(const OpContext& ctx) { run_avg_pool2d_with(ctx, quantized_avg_pool2d); }

}  // namespace cortexm::runtime
