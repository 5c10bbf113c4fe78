// FloatConvolution (float fallback): aten.convolution (not transposed) through the portable kernel
// the interpreter also runs, on contiguous NCW / NCHW float32 tensors.
#include "cortexm/portable/convolution.h"

#include "ops/conv/runtime/float_convolution_codec.h"
#include "runtime/ops/portable_layout.h"

namespace cortexm::runtime {

namespace {

portable::ConvolutionParams decode(const OpContext& ctx) {
  portable::ConvolutionParams p;
  program::decode_float_convolution(*ctx.op.params_as_FloatConvolutionParams(), &p);
  p.input = logical_shape(ctx.input(0));
  p.weight = logical_shape(ctx.input(1));
  return p;
}

}  // namespace

Status prepare_float_convolution(const OpContext& ctx) {
  CORTEXM_RETURN_IF_STATUS(require_contiguous_float(ctx));
  portable::Shape out;
  const Error error = portable::convolution_prepare(decode(ctx), &out);
  if (!error.ok()) return ctx.fail(error);
  if (ctx.has_input(2)) {
    const TensorView bias = ctx.input(2);
    if (bias.rank != 1 || bias.shape[0] != out.dims[1])
      return ctx.fail("bias.shape", bias.rank == 1 ? bias.shape[0] : bias.rank, "must be [output channels]");
  }
  return require_output_shape(ctx, out);
}

void run_float_convolution(const OpContext& ctx) {
  portable::convolution_f32(decode(ctx), reinterpret_cast<const float*>(ctx.input(0).data),
                            reinterpret_cast<const float*>(ctx.input(1).data),
                            ctx.has_input(2) ? reinterpret_cast<const float*>(ctx.input(2).data) : nullptr,
                            reinterpret_cast<float*>(ctx.output().data));
}

}  // namespace cortexm::runtime
