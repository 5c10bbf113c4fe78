// cortex_m.quantized_transpose_conv2d: the int8 transposed conv kernel on a logical NCHW
// (channels-last in memory) input and an OHWI weight; the kernel's prepare step is the validation.
#include "cortexm/kernels/quantized_transpose_conv2d.h"

#include "ops/cortex_m/cortex_m_util.h"

namespace cortexm::ops {

namespace {

struct TransposeConvCall {
  TransposeConv2dParams params;
  std::vector<int32_t> multipliers, shifts;
};

TransposeConvCall decode(const OpArgs& args, const TensorInfo& input, const TensorInfo& weight) {
  TransposeConvCall call;
  TransposeConv2dParams& p = call.params;
  p.input = nchw_dims(input.shape);
  p.filter = dims4(weight.shape);
  std::tie(p.stride_h, p.stride_w) = pair_attr(args, "stride");
  std::tie(p.output_padding_h, p.output_padding_w) = pair_attr(args, "output_padding");
  p.padding = padding_attr(args);
  p.quant.input_offset = int32_attr(args, "input_offset", -127, 128);
  p.quant.output_offset = int32_attr(args, "output_offset", -128, 127);
  p.quant.activation_min = int32_attr(args, "activation_min", -128, 127);
  p.quant.activation_max = int32_attr(args, "activation_max", -128, 127);
  call.multipliers = int32_list_attr(args, "requantize_multipliers", static_cast<size_t>(p.filter.n));
  call.shifts = int32_list_attr(args, "requantize_shifts", static_cast<size_t>(p.filter.n));
  p.quant.multipliers = call.multipliers.data();
  p.quant.shifts = call.shifts.data();
  p.output = quantized_transpose_conv2d_output_dims(p);
  return call;
}

std::vector<TensorInfo> infer(const InferContext& ctx) {
  require_int8_nchw(ctx, 0);
  check_scratch_bytes(ctx);
  require_rank(ctx, 1, {4});
  require_dtype(ctx, 1, {DType::kInt8});
  const TransposeConvCall call = decode(ctx, ctx.input(0), ctx.input(1));
  check_kernel(ctx, quantized_transpose_conv2d_prepare(call.params));
  if (ctx.has_input(2)) {
    require_dtype(ctx, 2, {DType::kInt32});
    if (ctx.input(2).shape != std::vector<int64_t>{call.params.filter.n})
      ctx.fail("bias " + shape_to_string(ctx.input(2).shape) + " must be [" +
               std::to_string(call.params.filter.n) + "]");
  }
  const Dims4& o = call.params.output;
  TensorInfo out = make_info(DType::kInt8, {o.n, o.c, o.h, o.w});
  out.dim_order = channels_last_dim_order(4);
  return {out};
}

void kernel(const KernelContext& ctx) {
  const TransposeConvCall call = decode(ctx, ctx.input(0).info(), ctx.input(1).info());
  const std::vector<int8_t> input = nchw_to_nhwc(ctx.input(0));
  std::vector<int8_t> output(static_cast<size_t>(call.params.output.elements()));
  std::vector<int32_t> scratch(
      quantized_transpose_conv2d_scratch_size(call.params, Isa::kScalar) / sizeof(int32_t) + 1);
  quantized_transpose_conv2d(call.params, input.data(), ctx.input(1).data<int8_t>(),
                             ctx.has_input(2) ? ctx.input(2).data<int32_t>() : nullptr,
                             output.data(), scratch.data());
  nhwc_to_nchw(output, ctx.output());
}

}  // namespace

void register_cortex_m_quantized_transpose_conv2d(OpRegistry& registry) {
  OpSchema s;
  s.name = "cortex_m.quantized_transpose_conv2d.default";
  s.inputs = {{"input"}, {"weight"}, {"bias", true}};
  s.attrs = {{"stride", AttrKind::kInts},
             {"padding", AttrKind::kInts},
             {"output_padding", AttrKind::kInts},
             {"input_offset", AttrKind::kInt},
             {"output_offset", AttrKind::kInt},
             {"requantize_multipliers", AttrKind::kInts},
             {"requantize_shifts", AttrKind::kInts},
             {"activation_min", AttrKind::kInt, false, AttrValue(int64_t{-128})},
             {"activation_max", AttrKind::kInt, false, AttrValue(int64_t{127})},
             scratch_bytes_attr()};
  s.infer = infer;
  s.kernel = kernel;
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
