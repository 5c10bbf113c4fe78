// The runtime's convolution ops (conv2d, depthwise, transposed, 16x8 and 16x16 conv2d): one prepare and one
// run over the kernel's params type P and entry points. The params come from the Conv2dParams
// table through ops/conv/runtime/conv_codec.h, the shapes from the tensors.
#pragma once

#include <type_traits>

#include "cortexm/kernels/kernel_isa.h"
#include "ops/conv/runtime/conv_codec.h"
#include "ops/conv/runtime/conv_decode.h"
#include "runtime/weighted_op_state.h"

namespace cortexm::runtime {

// int8 activations and int32 bias; the 16x8 conv's int16 activations and int64 bias.
template <class P>
using ConvElement = std::conditional_t<program::kConvHasOffsets<P>, int8_t, int16_t>;
template <class P>
using ConvBias = std::conditional_t<program::kConvHasOffsets<P>, int32_t, int64_t>;
// int8 weights; the 16x16 conv's int16.
template <class P>
using ConvWeight = std::conditional_t<std::is_same_v<P, Conv2dS16W16Params>, int16_t, int8_t>;

template <class P>
Status decode_conv_op(const OpContext& ctx, P* p) {
  p->input = nhwc_dims(ctx.input(0));
  p->filter = dims4_of(ctx.input(1));
  p->output = nhwc_dims(ctx.output());
  const Error error = program::decode_conv(*ctx.op.params_as_Conv2dParams(), p);
  return error.ok() ? kStatusOk : ctx.fail(error);
}

// The 16x8 conv's bias: int64 [count], 8-byte aligned, when present.
inline Status require_bias_s64(const OpContext& ctx, int32_t input, int64_t count) {
  if (!ctx.has_input(input)) return kStatusOk;
  const TensorView bias = ctx.input(input);
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "bias", bias, DType::kInt64));
  if (bias.rank != 1 || bias.shape[0] != count)
    return ctx.fail("bias.shape", bias.rank == 1 ? bias.shape[0] : bias.rank,
                    "must be [output channels]");
  if (reinterpret_cast<uintptr_t>(bias.data) % 8 != 0)
    return ctx.unsupported("bias", 0, "must be 8-byte aligned");
  return kStatusOk;
}

// The kernel's prepare validates stride and dilation before it computes the output shape (no
// division by a stride read from the file before then).
template <class P, Error (*Prepare)(const P&), size_t (*ScratchSize)(const P&, Isa)>
Status prepare_conv(const OpContext& ctx) {
  constexpr bool int8 = program::kConvHasOffsets<P>;
  constexpr DType activations = int8 ? DType::kInt8 : DType::kInt16;
  CORTEXM_RETURN_IF_STATUS(require_nhwc(ctx, "input", ctx.input(0), activations));
  const TensorView weights = ctx.input(1);
  CORTEXM_RETURN_IF_STATUS(require_dtype(
      ctx, "weights", weights, sizeof(ConvWeight<P>) == 1 ? DType::kInt8 : DType::kInt16));
  CORTEXM_RETURN_IF_STATUS(require_rank(ctx, "weights", weights, 4));
  if (!weights.is_contiguous())
    return ctx.unsupported("weights", 0,
                           program::kDepthwiseConv<P> ? "must be contiguous (IHWO)"
                                                      : "must be contiguous (OHWI)");
  for (int32_t d = 0; d < 4; ++d)
    if (weights.shape[d] < 1 || weights.shape[d] > INT32_MAX)
      return ctx.fail("weights.shape", weights.shape[d], "must be in [1, 2^31)", d);
  CORTEXM_RETURN_IF_STATUS(require_nhwc(ctx, "output", ctx.output(), activations));
  // The output channels: the weight's first dim; a depthwise weight (IHWO) ends with them.
  int64_t channels = weights.shape[0];
  if constexpr (program::kDepthwiseConv<P>) {
    channels = ctx.output().shape[1];
    if (weights.shape[3] != channels)
      return ctx.fail("weights.shape", weights.shape[3], "must end with the output channels", 3);
  }
  const auto* params = ctx.op.params_as_Conv2dParams();
  CORTEXM_RETURN_IF_STATUS(
      require_requantize(ctx, params->multipliers(), params->shifts(), channels));
  P p;
  CORTEXM_RETURN_IF_STATUS(decode_conv_op(ctx, &p));
  const Error error = Prepare(p);
  if (!error.ok()) return ctx.fail(error);
  CORTEXM_RETURN_IF_STATUS(int8 ? require_bias(ctx, 2, channels)
                                : require_bias_s64(ctx, 2, channels));
  return require_scratch(ctx, ScratchSize(p, kKernelIsa));
}

template <class P>
using ConvKernel = void (*)(const P&, const ConvElement<P>*, const ConvWeight<P>*,
                            const ConvBias<P>*, ConvElement<P>*, void*);

// A convolution op's state: its kernel params and operands.
template <class P>
using ConvState = WeightedOpState<P>;

template <class P, size_t (*ScratchSize)(const P&, Isa)>
inline constexpr OpState kConvState =
    kOpState<ConvState<P>, init_weighted_op<P, decode_conv_op<P>, ScratchSize>, 176>;

// Runs the op with the kernel `run` (the kernel's entry point, or one with only some of its paths).
template <class P, size_t (*ScratchSize)(const P&, Isa)>
void run_conv_with(const OpContext& ctx, ConvKernel<P> run) {
  using T = ConvElement<P>;
  const ConvState<P>& s = state_of<ConvState<P>>(ctx);
  P copy;
  run(with_host_kernels(ctx, s.params, &copy), ctx.data_as<const T>(s.input),
      ctx.data_as<const ConvWeight<P>>(s.weights), ctx.data_as<const ConvBias<P>>(s.bias), ctx.data_as<T>(s.output),
      ctx.data(s.scratch));
}

template <class P, ConvKernel<P> Run, size_t (*ScratchSize)(const P&, Isa)>
void run_conv(const OpContext& ctx) {
  run_conv_with<P, ScratchSize>(ctx, Run);
}

// The bytes a conv op's output may start below its input (the kernel's in-place lag of its params).
template <class P, int64_t (*Lag)(const P&)>
int64_t conv_in_place_lag(const OpContext& ctx) {
  P p;
  decode_conv_op(ctx, &p);
  return Lag(p);
}

// A conv kernel's runtime op: prepare_<kernel>, <kernel>_state and run_<kernel> (ops.def names
// them) over params P and the kernel's <kernel>_prepare, <kernel>_scratch_size and entry point.
#define CORTEXM_CONV_RUNTIME_OP(kernel, P)                                             \
  Status prepare_##kernel(const OpContext& ctx) {                                      \
    return prepare_conv<P, kernel##_prepare, kernel##_scratch_size>(ctx);              \
  }                                                                                    \
  extern const OpState kernel##_state = kConvState<P, kernel##_scratch_size>;          \
  void run_##kernel(const OpContext& ctx) { run_conv<P, kernel, kernel##_scratch_size>(ctx); }

}  // namespace cortexm::runtime
