// QuantizedLinear: input [..., K] int8 contiguous, weights [C_out, K] int8, optional int32 bias.
// QuantizedLinearS16: input [..., K] int16 contiguous, weights [C_out, K] int8, optional int64
// bias, int16 output (arm_fully_connected_s16 arithmetic; the LinearParams offsets must be 0).
// QuantizedLinearS16W16: as QuantizedLinearS16 with int16 weights [C_out, K].
// One prepare and run for the three; the table decodes through ops/linear/runtime/linear_codec.h.
#include <type_traits>

#include "cortexm/kernels/quantized_linear.h"
#include "cortexm/kernels/quantized_linear_s16.h"
#include "cortexm/kernels/quantized_linear_s16w16.h"
#include "ops/linear/runtime/linear_codec.h"
#include "ops/conv/runtime/conv_decode.h"
#include "runtime/ops/host_pack_ops.h"
#include "runtime/weighted_op_state.h"

namespace cortexm::runtime {

namespace {

template <class T>
constexpr DType kDTypeOf = sizeof(T) == 1 ? DType::kInt8 : DType::kInt16;

template <class P>
Status decode(const OpContext& ctx, P* p) {
  const TensorView input = ctx.input(0), weights = ctx.input(1);
  p->input_features = static_cast<int32_t>(weights.shape[1]);
  p->output_features = static_cast<int32_t>(weights.shape[0]);
  p->batches = static_cast<int32_t>(input.numel() / (p->input_features ? p->input_features : 1));
  const program::NonzeroOffset bad = program::decode_linear(*ctx.op.params_as_LinearParams(), p);
  if (bad.field) return ctx.fail(bad.field, bad.value, "must be 0 (symmetric 16x8)");
  return kStatusOk;
}

template <class P, class T, class W, class Bias, Error (*Prepare)(const P&),
          size_t (*ScratchSize)(const P&, Isa)>
Status prepare_linear(const OpContext& ctx) {
  const TensorView input = ctx.input(0), weights = ctx.input(1), output = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "input", input, kDTypeOf<T>));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "weights", weights, kDTypeOf<W>));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "output", output, kDTypeOf<T>));
  CORTEXM_RETURN_IF_STATUS(require_rank(ctx, "weights", weights, 2));
  if (input.rank < 1) return ctx.fail("input.rank", input.rank, "must be >= 1");
  if (!input.is_contiguous()) return ctx.unsupported("input", 0, "must be contiguous");
  if (!weights.is_contiguous()) return ctx.unsupported("weights", 0, "must be contiguous");
  if (!output.is_contiguous()) return ctx.unsupported("output", 0, "must be contiguous");
  if (weights.shape[0] < 1 || weights.shape[0] > INT32_MAX)
    return ctx.fail("weights.shape", weights.shape[0], "must be in [1, 2^31)", 0);
  if (weights.shape[1] != input.shape[input.rank - 1] || weights.shape[1] < 1)
    return ctx.fail("weights.shape", weights.shape[1], "must equal the input features", 1);
  if (input.numel() / weights.shape[1] > INT32_MAX)
    return ctx.fail("input.numel", input.numel(), "is too large");
  if (output.rank != input.rank) return ctx.fail("output.rank", output.rank, "must equal input.rank");
  for (int32_t d = 0; d + 1 < input.rank; ++d)
    if (output.shape[d] != input.shape[d])
      return ctx.fail("output.shape", output.shape[d], "must match the input's leading dims", d);
  if (output.shape[output.rank - 1] != weights.shape[0])
    return ctx.fail("output.shape", output.shape[output.rank - 1],
                    "must end with the output features", output.rank - 1);
  P p;
  CORTEXM_RETURN_IF_STATUS(decode(ctx, &p));
  if (p.num_multipliers != 1 && p.num_multipliers != weights.shape[0])
    return ctx.fail("params.multipliers.size", p.num_multipliers, "must be 1 or the output features");
  const auto* params = ctx.op.params_as_LinearParams();
  CORTEXM_RETURN_IF_STATUS(require_requantize(ctx, params->multipliers(), params->shifts(), p.num_multipliers));
  const Error error = Prepare(p);
  if (!error.ok()) return ctx.fail(error);
  if constexpr (sizeof(Bias) == 4) {
    CORTEXM_RETURN_IF_STATUS(require_bias(ctx, 2, weights.shape[0]));
  } else if (ctx.has_input(2)) {
    const TensorView bias = ctx.input(2);
    CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "bias", bias, DType::kInt64));
    if (bias.rank != 1 || bias.shape[0] != weights.shape[0])
      return ctx.fail("bias.shape", bias.rank == 1 ? bias.shape[0] : bias.rank,
                      "must be [output features]");
    if (reinterpret_cast<uintptr_t>(bias.data) % 8 != 0)
      return ctx.unsupported("bias", 0, "must be 8-byte aligned");
  }
  return require_scratch(ctx, ScratchSize(p, kKernelIsa));
}

template <class P>
using LinearState = WeightedOpState<P>;

template <class P, class T, class W, class Bias, void (*Run)(const P&, const T*, const W*, const Bias*, T*, void*),
          size_t (*ScratchSize)(const P&, Isa)>
void run_linear(const OpContext& ctx) {
  const auto& s = state_of<LinearState<P>>(ctx);
  P copy;
  Run(with_host_kernels(ctx, s.params, &copy), ctx.data_as<const T>(s.input), ctx.data_as<const W>(s.weights),
      ctx.data_as<const Bias>(s.bias), ctx.data_as<T>(s.output), ctx.data(s.scratch));
}

template <class P, size_t (*ScratchSize)(const P&, Isa)>
inline constexpr OpState kLinearState = kOpState<LinearState<P>, init_weighted_op<P, decode<P>, ScratchSize>, 112>;

}  // namespace

// A linear kernel's runtime op: prepare_<kernel>, <kernel>_state and run_<kernel> (ops.def names
// them) over params P, activations T, weights W and bias Bias.
#define CORTEXM_LINEAR_RUNTIME_OP(kernel, P, T, W, Bias)                                \
  extern const OpState kernel##_state = kLinearState<P, kernel##_scratch_size>;         \
  Status prepare_##kernel(const OpContext& ctx) {                                       \
    return prepare_linear<P, T, W, Bias, kernel##_prepare, kernel##_scratch_size>(ctx); \
  }                                                                                     \
  void run_##kernel(const OpContext& ctx) {                                             \
    run_linear<P, T, W, Bias, kernel, kernel##_scratch_size>(ctx);                      \
  }

CORTEXM_LINEAR_RUNTIME_OP(quantized_linear, LinearParams, int8_t, int8_t, int32_t)
CORTEXM_LINEAR_RUNTIME_OP(quantized_linear_s16, LinearS16Params, int16_t, int8_t, int64_t)
CORTEXM_LINEAR_RUNTIME_OP(quantized_linear_s16w16, LinearS16W16Params, int16_t, int16_t, int64_t)

size_t host_pack_quantized_linear(const OpContext& ctx, HostVariant variant, void* packed) {
  LinearParams p;
  if (!decode(ctx, &p).ok()) return 0;  // (load has checked it)
  p.host_variant = variant;
  return host_pack_weights<LinearParams, quantized_linear_host_packed_size, quantized_linear_host_pack>(ctx, p,
                                                                                                         packed);
}

}  // namespace cortexm::runtime
