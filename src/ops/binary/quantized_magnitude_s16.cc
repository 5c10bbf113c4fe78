// cortex_m.quantized_magnitude_s16: |z| of two int16 tensors of one shape (quantized_magnitude_s16.h)
// to int8 or int16 (attribute output_dtype); the output keeps the inputs' shape and dim order.
#include "cortexm/kernels/quantized_magnitude_s16.h"

#include "ops/cortex_m_util.h"
#include "ops/quant/runtime/requantize_codec.h"
#include "program/params_builder.h"

namespace cortexm::ops {

namespace {

MagnitudeParams decode(const OpArgs& args, const TensorInfo& input) {
  const DType dtype = args.dtype("output_dtype");
  if (dtype != DType::kInt8 && dtype != DType::kInt16)
    args.fail(std::string("attribute 'output_dtype' ") + dtype_name(dtype) +
              " must be int8 or int16");
  const bool int8_output = dtype == DType::kInt8;
  const int64_t lo = int8_output ? -128 : -32768, hi = int8_output ? 127 : 32767;
  MagnitudeParams p;
  p.size = input.numel();
  p.int8_output = int8_output;
  p.multiplier = int32_attr(args, "output_multiplier", 0, INT32_MAX);
  p.shift = int32_attr(args, "output_shift", -31, 30);
  p.output_offset = int32_attr(args, "output_zero_point", lo, hi);
  p.activation_min = int32_attr(args, "activation_min", lo, hi);
  p.activation_max = int32_attr(args, "activation_max", lo, hi);
  return p;
}

}  // namespace

void register_cortex_m_quantized_magnitude_s16(OpRegistry& registry) {
  OpSchema s;
  s.name = "cortex_m.quantized_magnitude_s16.default";
  s.inputs = {{"real"}, {"imag"}};
  s.attrs = {{"output_multiplier", AttrKind::kInt},
             {"output_shift", AttrKind::kInt},
             {"output_zero_point", AttrKind::kInt},
             {"output_dtype", AttrKind::kDType},
             {"activation_min", AttrKind::kInt},
             {"activation_max", AttrKind::kInt}};
  s.infer = [](const InferContext& ctx) {
    require_dtype(ctx, 0, {DType::kInt16});
    require_dtype(ctx, 1, {DType::kInt16});
    if (ctx.input(1).shape != ctx.input(0).shape || ctx.input(1).dim_order != ctx.input(0).dim_order)
      ctx.fail("imag " + shape_to_string(ctx.input(1).shape) + " must have the shape and dim "
               "order of real " + shape_to_string(ctx.input(0).shape));
    const MagnitudeParams p = decode(ctx, ctx.input(0));
    check_kernel(ctx, quantized_magnitude_s16_prepare(p));
    TensorInfo out = make_info(p.int8_output ? DType::kInt8 : DType::kInt16, ctx.input(0).shape);
    out.dim_order = ctx.input(0).dim_order;
    return std::vector<TensorInfo>{out};
  };
  s.kernel = [](const KernelContext& ctx) {
    const MagnitudeParams p = decode(ctx, ctx.input(0).info());
    if (p.int8_output) {
      quantized_magnitude_s16(p, ctx.input(0).data<int16_t>(), ctx.input(1).data<int16_t>(),
                              ctx.output().data<int8_t>());
    } else {
      quantized_magnitude_s16(p, ctx.input(0).data<int16_t>(), ctx.input(1).data<int16_t>(),
                              ctx.output().data<int16_t>());
    }
  };
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    return program::encoded(fb::KernelId_QuantizedMagnitudeS16,
                            program::encode_requantize(b.fbb(), decode(node, node.input(0))));
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
