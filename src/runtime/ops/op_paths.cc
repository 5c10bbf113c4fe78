#include "runtime/ops/op_paths.h"

#include "ops/conv/runtime/conv.h"
#include "ops/pool/runtime/pool_decode.h"

namespace cortexm::runtime {

template bool verify_params<fb::Conv2dParams>(flatbuffers::Verifier&, const void*);
template bool verify_params<fb::Pool2dParams>(flatbuffers::Verifier&, const void*);

uint32_t kernel_paths(const Program& program, int32_t index) {
  const OpContext ctx{program, *program.fb().ops()->Get(index), index, nullptr};
  switch (ctx.op.kernel()) {
    case fb::KernelId_QuantizedConv2d: {
      Conv2dParams p;
      decode_conv_op(ctx, &p);
      return quantized_conv2d_paths(p);
    }
    case fb::KernelId_QuantizedDepthwiseConv2d: {
      DepthwiseConv2dParams p;
      decode_conv_op(ctx, &p);
      return quantized_depthwise_conv2d_paths(p);
    }
    case fb::KernelId_QuantizedAvgPool2d:
      return quantized_avg_pool2d_paths(decode_pool(ctx));
    default:
      return 0;
  }
}

namespace {

// kUnsupported unless the paths the op takes are all among `registered`.
Status require_paths(const OpContext& ctx, uint32_t registered) {
  const uint32_t taken = kernel_paths(ctx.program, ctx.index);
  if ((taken & ~registered) == 0) return kStatusOk;
  return ctx.unsupported("kernel paths", taken,
                         "are not all registered in this runtime's OpResolver (firmware built for other "
                         "paths of this kernel: export the program again with Program.export_c)");
}

}  // namespace

Status prepare_conv2d_on_paths(const OpContext& ctx, uint32_t registered) {
  CORTEXM_RETURN_IF_STATUS(prepare_quantized_conv2d(ctx));
  return require_paths(ctx, registered);
}

Status prepare_depthwise_conv2d_on_paths(const OpContext& ctx, uint32_t registered) {
  CORTEXM_RETURN_IF_STATUS(prepare_quantized_depthwise_conv2d(ctx));
  return require_paths(ctx, registered);
}

Status prepare_avg_pool2d_on_paths(const OpContext& ctx, uint32_t registered) {
  CORTEXM_RETURN_IF_STATUS(prepare_quantized_avg_pool2d(ctx));
  return require_paths(ctx, registered);
}

void run_conv2d_with(const OpContext& ctx, ConvKernel<Conv2dParams> kernel) {
  run_conv_with<Conv2dParams, quantized_conv2d_scratch_size>(ctx, kernel);
}

void run_depthwise_conv2d_with(const OpContext& ctx, ConvKernel<DepthwiseConv2dParams> kernel) {
  run_conv_with<DepthwiseConv2dParams, quantized_depthwise_conv2d_scratch_size>(ctx, kernel);
}

}  // namespace cortexm::runtime
