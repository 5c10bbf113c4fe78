// cortex_m.quantized_linear: input [..., K] int8, weights [C_out, K] int8, bias int32 [C_out].
// cortex_m.quantized_linear_s16: input [..., K] int16 (zero point 0), weights [C_out, K] int8
// (zero point 0), bias int64 [C_out], int16 output. cortex_m.quantized_linear_s16w16: as
// quantized_linear_s16 with int16 weights [C_out, K] (zero point 0). Per-tensor (one multiplier)
// or per-channel requantize. One descriptor template for the three; kernel params <-> program
// table: ops/linear/runtime/linear_codec.h.
#include <limits>

#include "cortexm/kernels/quantized_linear.h"
#include "cortexm/kernels/quantized_linear_s16.h"
#include "cortexm/kernels/quantized_linear_s16w16.h"
#include "ops/cortex_m_util.h"
#include "ops/linear/runtime/linear_codec.h"
#include "program/params_builder.h"

namespace cortexm::ops {

namespace {

using program::has_linear_offsets;

template <class P>
struct LinearCall {
  P params;
  std::vector<int32_t> multipliers, shifts;
};

// The kernel's element types: T in and out, W for the weights, Bias for the bias.
template <class P>
struct LinearTypes;
template <>
struct LinearTypes<LinearParams> {
  using T = int8_t;
  using W = int8_t;
  using Bias = int32_t;
  static constexpr Error (*prepare)(const LinearParams&) = quantized_linear_prepare;
  static constexpr size_t (*scratch_size)(const LinearParams&, Isa) = quantized_linear_scratch_size;
};
template <>
struct LinearTypes<LinearS16Params> {
  using T = int16_t;
  using W = int8_t;
  using Bias = int64_t;
  static constexpr Error (*prepare)(const LinearS16Params&) = quantized_linear_s16_prepare;
  static constexpr size_t (*scratch_size)(const LinearS16Params&, Isa) = quantized_linear_s16_scratch_size;
};
template <>
struct LinearTypes<LinearS16W16Params> {
  using T = int16_t;
  using W = int16_t;
  using Bias = int64_t;
  static constexpr Error (*prepare)(const LinearS16W16Params&) = quantized_linear_s16w16_prepare;
  static constexpr size_t (*scratch_size)(const LinearS16W16Params&, Isa) =
      quantized_linear_s16w16_scratch_size;
};

template <class T>
constexpr DType kIntDType = sizeof(T) == 1 ? DType::kInt8 : DType::kInt16;
template <class P>
constexpr DType kDType = kIntDType<typename LinearTypes<P>::T>;

template <class P>
LinearCall<P> decode(const OpArgs& args, const TensorInfo& input, const TensorInfo& weights) {
  using T = typename LinearTypes<P>::T;
  constexpr int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  LinearCall<P> call;
  P& p = call.params;
  const int64_t k = input.shape.back();
  const int64_t rows = input.numel() / (k == 0 ? 1 : k);
  if (rows > INT32_MAX || k > INT32_MAX || weights.shape[0] > INT32_MAX)
    args.fail("input " + shape_to_string(input.shape) + " is too large");
  p.batches = static_cast<int32_t>(rows);
  p.input_features = static_cast<int32_t>(k);
  p.output_features = static_cast<int32_t>(weights.shape[0]);
  if (weights.shape[1] != k)
    args.fail("weights " + shape_to_string(weights.shape) + " do not match input features " +
              std::to_string(k));
  if constexpr (has_linear_offsets<P>::value) {
    p.input_offset = int32_attr(args, "input_offset", -127, 128);
    p.filter_offset = int32_attr(args, "filter_offset", -127, 128);
    p.output_offset = int32_attr(args, "output_offset", -128, 127);
    p.bias_includes_input_offset = args.b("bias_includes_input_offset");
  }
  p.activation_min = int32_attr(args, "activation_min", lo, hi);
  p.activation_max = int32_attr(args, "activation_max", lo, hi);
  const size_t count = args.ints("requantize_multipliers").size();
  if (count != 1 && count != static_cast<size_t>(p.output_features))
    args.fail("attribute 'requantize_multipliers' has " + std::to_string(count) +
              " values, expected 1 or " + std::to_string(p.output_features));
  call.multipliers = int32_list_attr(args, "requantize_multipliers", count);
  call.shifts = int32_list_attr(args, "requantize_shifts", count);
  p.multipliers = call.multipliers.data();
  p.shifts = call.shifts.data();
  p.num_multipliers = static_cast<int32_t>(count);
  return call;
}

template <class P>
std::vector<TensorInfo> infer(const InferContext& ctx) {
  require_dtype(ctx, 0, {kDType<P>});
  require_dtype(ctx, 1, {kIntDType<typename LinearTypes<P>::W>});
  require_rank(ctx, 1, {2});
  check_scratch_bytes(ctx);
  if (ctx.input(0).rank() < 1) ctx.fail("input must have at least one dim");
  const LinearCall<P> call = decode<P>(ctx, ctx.input(0), ctx.input(1));
  check_kernel(ctx, LinearTypes<P>::prepare(call.params));
  if (ctx.has_input(2)) {
    require_dtype(ctx, 2, {sizeof(typename LinearTypes<P>::Bias) == 4 ? DType::kInt32 : DType::kInt64});
    if (ctx.input(2).shape != std::vector<int64_t>{call.params.output_features})
      ctx.fail("bias " + shape_to_string(ctx.input(2).shape) + " must be [" +
               std::to_string(call.params.output_features) + "]");
  }
  std::vector<int64_t> shape = ctx.input(0).shape;
  shape.back() = call.params.output_features;
  return {make_info(kDType<P>, shape)};
}

template <class P, void (*Run)(const P&, const typename LinearTypes<P>::T*, const typename LinearTypes<P>::W*,
                               const typename LinearTypes<P>::Bias*, typename LinearTypes<P>::T*, void*)>
void kernel(const KernelContext& ctx) {
  using T = typename LinearTypes<P>::T;
  using Bias = typename LinearTypes<P>::Bias;
  LinearCall<P> call = decode<P>(ctx, ctx.input(0).info(), ctx.input(1).info());
  ctx.take_host_variant(&call.params);
  std::vector<uint32_t> scratch(LinearTypes<P>::scratch_size(call.params, Isa::kScalar) / 4 + 1);
  Run(call.params, ctx.input(0).data<T>(), ctx.input(1).data<typename LinearTypes<P>::W>(),
      ctx.has_input(2) ? ctx.input(2).data<Bias>() : nullptr, ctx.output().data<T>(), scratch.data());
}

template <class P, auto Run>
OpSchema linear_schema(const char* name, fb::KernelId kernel_id) {
  using T = typename LinearTypes<P>::T;
  OpSchema s;
  s.name = name;
  s.inputs = {{"input"}, {"weights"}, {"bias", true}};
  s.fuses_activation = true;
  if constexpr (has_linear_offsets<P>::value) {
    s.attrs = {{"input_offset", AttrKind::kInt},
               {"filter_offset", AttrKind::kInt, false, AttrValue(int64_t{0})},
               {"output_offset", AttrKind::kInt}};
  }
  s.attrs.push_back({"requantize_multipliers", AttrKind::kInts});
  s.attrs.push_back({"requantize_shifts", AttrKind::kInts});
  s.attrs.push_back({"activation_min", AttrKind::kInt, false,
                     AttrValue(int64_t{std::numeric_limits<T>::min()})});
  s.attrs.push_back({"activation_max", AttrKind::kInt, false,
                     AttrValue(int64_t{std::numeric_limits<T>::max()})});
  if constexpr (has_linear_offsets<P>::value)
    s.attrs.push_back({"bias_includes_input_offset", AttrKind::kBool, false, AttrValue(false)});
  s.attrs.push_back(scratch_bytes_attr());
  s.infer = infer<P>;
  s.kernel = kernel<P, Run>;
  s.encode = [kernel_id](program::ParamsBuilder& b, const NodeContext& node) {
    const LinearCall<P> call = decode<P>(node, node.input(0), node.input(1));
    return program::encoded(kernel_id, program::encode_linear(b.fbb(), call.params));
  };
  s.scratch = [](const NodeContext& node, Isa isa) {
    return LinearTypes<P>::scratch_size(decode<P>(node, node.input(0), node.input(1)).params, isa);
  };
  return s;
}

}  // namespace

void register_cortex_m_quantized_linear(OpRegistry& registry) {
  registry.add(linear_schema<LinearParams, quantized_linear>("cortex_m.quantized_linear.default",
                                                             fb::KernelId_QuantizedLinear));
}

void register_cortex_m_quantized_linear_s16(OpRegistry& registry) {
  registry.add(linear_schema<LinearS16Params, quantized_linear_s16>(
      "cortex_m.quantized_linear_s16.default", fb::KernelId_QuantizedLinearS16));
}

void register_cortex_m_quantized_linear_s16w16(OpRegistry& registry) {
  registry.add(linear_schema<LinearS16W16Params, quantized_linear_s16w16>(
      "cortex_m.quantized_linear_s16w16.default", fb::KernelId_QuantizedLinearS16W16));
}

}  // namespace cortexm::ops
