// cortex_m.quantized_linear_s16: input [..., K] int16 (zero point 0), weights [C_out, K] int8,
// bias int64 [C_out]; per-tensor (one multiplier) or per-channel requantize to int16.
#include "cortexm/kernels/quantized_linear_s16.h"

#include "ops/cortex_m/cortex_m_util.h"

namespace cortexm::ops {

namespace {

struct LinearS16Call {
  LinearS16Params params;
  std::vector<int32_t> multipliers, shifts;
};

LinearS16Call decode(const OpArgs& args, const TensorInfo& input, const TensorInfo& weights) {
  LinearS16Call call;
  LinearS16Params& p = call.params;
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
  p.activation_min = int32_attr(args, "activation_min", -32768, 32767);
  p.activation_max = int32_attr(args, "activation_max", -32768, 32767);
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

std::vector<TensorInfo> infer(const InferContext& ctx) {
  require_dtype(ctx, 0, {DType::kInt16});
  require_dtype(ctx, 1, {DType::kInt8});
  require_rank(ctx, 1, {2});
  check_scratch_bytes(ctx);
  if (ctx.input(0).rank() < 1) ctx.fail("input must have at least one dim");
  const LinearS16Call call = decode(ctx, ctx.input(0), ctx.input(1));
  check_kernel(ctx, quantized_linear_s16_prepare(call.params));
  if (ctx.has_input(2)) {
    require_dtype(ctx, 2, {DType::kInt64});
    if (ctx.input(2).shape != std::vector<int64_t>{call.params.output_features})
      ctx.fail("bias " + shape_to_string(ctx.input(2).shape) + " must be [" +
               std::to_string(call.params.output_features) + "]");
  }
  std::vector<int64_t> shape = ctx.input(0).shape;
  shape.back() = call.params.output_features;
  return {make_info(DType::kInt16, shape)};
}

void kernel(const KernelContext& ctx) {
  const LinearS16Call call = decode(ctx, ctx.input(0).info(), ctx.input(1).info());
  std::vector<uint32_t> scratch(quantized_linear_s16_scratch_size(call.params, Isa::kScalar) / 4 + 1);
  quantized_linear_s16(call.params, ctx.input(0).data<int16_t>(), ctx.input(1).data<int8_t>(),
                       ctx.has_input(2) ? ctx.input(2).data<int64_t>() : nullptr,
                       ctx.output().data<int16_t>(), scratch.data());
}

}  // namespace

void register_cortex_m_quantized_linear_s16(OpRegistry& registry) {
  OpSchema s;
  s.name = "cortex_m.quantized_linear_s16.default";
  s.inputs = {{"input"}, {"weights"}, {"bias", true}};
  s.attrs = {{"requantize_multipliers", AttrKind::kInts},
             {"requantize_shifts", AttrKind::kInts},
             {"activation_min", AttrKind::kInt, false, AttrValue(int64_t{-32768})},
             {"activation_max", AttrKind::kInt, false, AttrValue(int64_t{32767})},
             scratch_bytes_attr()};
  s.infer = infer;
  s.kernel = kernel;
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
