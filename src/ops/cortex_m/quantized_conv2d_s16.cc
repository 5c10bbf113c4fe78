// cortex_m.quantized_conv2d_s16: the 16x8 conv kernel (quantized_conv2d_s16.h) on a logical NCHW
// (channels-last in memory) int16 input, an OHWI int8 weight and an int64 bias; int16 output.
#include "cortexm/kernels/quantized_conv2d_s16.h"

#include "ops/cortex_m/cortex_m_util.h"

namespace cortexm::ops {

namespace {

struct Conv2dS16Call {
  Conv2dS16Params params;
  std::vector<int32_t> multipliers, shifts;
};

Conv2dS16Call decode(const OpArgs& args, const TensorInfo& input, const TensorInfo& weight) {
  Conv2dS16Call call;
  Conv2dS16Params& p = call.params;
  p.input = nchw_dims(input.shape);
  p.filter = dims4(weight.shape);
  std::tie(p.geometry.stride_h, p.geometry.stride_w) = pair_attr(args, "stride");
  std::tie(p.geometry.dilation_h, p.geometry.dilation_w) = pair_attr(args, "dilation");
  p.geometry.padding = padding_attr(args);
  p.activation_min = int32_attr(args, "activation_min", -32768, 32767);
  p.activation_max = int32_attr(args, "activation_max", -32768, 32767);
  call.multipliers = int32_list_attr(args, "requantize_multipliers", static_cast<size_t>(p.filter.n));
  call.shifts = int32_list_attr(args, "requantize_shifts", static_cast<size_t>(p.filter.n));
  p.multipliers = call.multipliers.data();
  p.shifts = call.shifts.data();
  p.output = quantized_conv2d_s16_output_dims(p);
  return call;
}

std::vector<TensorInfo> infer(const InferContext& ctx) {
  require_rank(ctx, 0, {4});
  require_dtype(ctx, 0, {DType::kInt16});
  for (int64_t d : ctx.input(0).shape)
    if (d < 1 || d > INT32_MAX)
      ctx.fail("input 0 shape " + shape_to_string(ctx.input(0).shape) +
               " has an extent outside [1, 2^31)");
  check_scratch_bytes(ctx);
  require_rank(ctx, 1, {4});
  require_dtype(ctx, 1, {DType::kInt8});
  const Conv2dS16Call call = decode(ctx, ctx.input(0), ctx.input(1));
  check_kernel(ctx, quantized_conv2d_s16_prepare(call.params));
  if (ctx.has_input(2)) {
    require_dtype(ctx, 2, {DType::kInt64});
    if (ctx.input(2).shape != std::vector<int64_t>{call.params.filter.n})
      ctx.fail("bias " + shape_to_string(ctx.input(2).shape) + " must be [" +
               std::to_string(call.params.filter.n) + "]");
  }
  const Dims4& o = call.params.output;
  TensorInfo out = make_info(DType::kInt16, {o.n, o.c, o.h, o.w});
  out.dim_order = channels_last_dim_order(4);
  return {out};
}

void kernel(const KernelContext& ctx) {
  const Conv2dS16Call call = decode(ctx, ctx.input(0).info(), ctx.input(1).info());
  const std::vector<int16_t> input = nchw_to_nhwc_as<int16_t>(ctx.input(0));
  std::vector<int16_t> output(static_cast<size_t>(call.params.output.elements()));
  std::vector<uint32_t> scratch(quantized_conv2d_s16_scratch_size(call.params, Isa::kScalar) / 4 + 1);
  quantized_conv2d_s16(call.params, input.data(), ctx.input(1).data<int8_t>(),
                       ctx.has_input(2) ? ctx.input(2).data<int64_t>() : nullptr, output.data(),
                       scratch.data());
  nhwc_to_nchw_as(output, ctx.output());
}

}  // namespace

void register_cortex_m_quantized_conv2d_s16(OpRegistry& registry) {
  OpSchema s;
  s.name = "cortex_m.quantized_conv2d_s16.default";
  s.inputs = {{"input"}, {"weight"}, {"bias", true}};
  s.attrs = {{"stride", AttrKind::kInts},
             {"padding", AttrKind::kInts},
             {"dilation", AttrKind::kInts},
             {"requantize_multipliers", AttrKind::kInts},
             {"requantize_shifts", AttrKind::kInts},
             {"activation_min", AttrKind::kInt, false, AttrValue(int64_t{-32768})},
             {"activation_max", AttrKind::kInt, false, AttrValue(int64_t{32767})},
             scratch_bytes_attr()};
  s.infer = infer;
  s.kernel = kernel;
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
