// QuantizedLinearS16: input [..., K] int16 contiguous, weights [C_out, K] int8, optional int64
// bias, int16 output (arm_fully_connected_s16 arithmetic; the LinearParams offsets must be 0).
#include "cortexm/kernels/quantized_linear_s16.h"

#include "runtime/ops/conv_decode.h"

namespace cortexm::runtime {

namespace {

LinearS16Params decode(const OpContext& ctx) {
  const auto* params = ctx.op.params_as_LinearParams();
  const TensorView input = ctx.input(0), weights = ctx.input(1);
  LinearS16Params p;
  p.input_features = static_cast<int32_t>(weights.shape[1]);
  p.output_features = static_cast<int32_t>(weights.shape[0]);
  p.batches = static_cast<int32_t>(input.numel() / (p.input_features ? p.input_features : 1));
  p.activation_min = params->activation_min();
  p.activation_max = params->activation_max();
  p.multipliers = params->multipliers() ? params->multipliers()->data() : nullptr;
  p.shifts = params->shifts() ? params->shifts()->data() : nullptr;
  p.num_multipliers = params->multipliers() ? static_cast<int32_t>(params->multipliers()->size()) : 0;
  return p;
}

}  // namespace

Status prepare_quantized_linear_s16(const OpContext& ctx) {
  const TensorView input = ctx.input(0), weights = ctx.input(1), output = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "input", input, DType::kInt16));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "weights", weights, DType::kInt8));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "output", output, DType::kInt16));
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
  const auto* params = ctx.op.params_as_LinearParams();
  if (params->input_offset() != 0)
    return ctx.fail("params.input_offset", params->input_offset(), "must be 0 (symmetric int16)");
  if (params->filter_offset() != 0)
    return ctx.fail("params.filter_offset", params->filter_offset(), "must be 0 (symmetric int8)");
  if (params->output_offset() != 0)
    return ctx.fail("params.output_offset", params->output_offset(), "must be 0 (symmetric int16)");
  const int64_t count = params->multipliers() ? params->multipliers()->size() : 0;
  if (count != 1 && count != weights.shape[0])
    return ctx.fail("params.multipliers.size", count, "must be 1 or the output features");
  CORTEXM_RETURN_IF_STATUS(require_requantize(ctx, params->multipliers(), params->shifts(), count));
  const LinearS16Params p = decode(ctx);
  const Error error = quantized_linear_s16_prepare(p);
  if (!error.ok()) return ctx.fail(error);
  if (ctx.has_input(2)) {
    const TensorView bias = ctx.input(2);
    CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "bias", bias, DType::kInt64));
    if (bias.rank != 1 || bias.shape[0] != weights.shape[0])
      return ctx.fail("bias.shape", bias.rank == 1 ? bias.shape[0] : bias.rank,
                      "must be [output features]");
    if (reinterpret_cast<uintptr_t>(bias.data) % 8 != 0)
      return ctx.unsupported("bias", 0, "must be 8-byte aligned");
  }
  return require_scratch(ctx, quantized_linear_s16_scratch_size(p, ctx.program.isa()));
}

void run_quantized_linear_s16(const OpContext& ctx) {
  quantized_linear_s16(decode(ctx), reinterpret_cast<const int16_t*>(ctx.input(0).data),
                       reinterpret_cast<const int8_t*>(ctx.input(1).data),
                       ctx.has_input(2) ? reinterpret_cast<const int64_t*>(ctx.input(2).data) : nullptr,
                       reinterpret_cast<int16_t*>(ctx.output().data), ctx.scratch());
}

}  // namespace cortexm::runtime
