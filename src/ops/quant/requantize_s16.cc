// cortex_m.requantize_s16: requantize with int16 on either side (requantize_s16.h); the output
// dtype is the attribute output_dtype, the input's dtype the other side; shape and dim order kept.
#include "cortexm/kernels/requantize_s16.h"

#include "ops/output_requantization.h"
#include "ops/quant/runtime/requantize_codec.h"
#include "program/params_builder.h"

namespace cortexm::ops {

namespace {

RequantizeS16Params decode(const OpArgs& args, const TensorInfo& input) {
  const DType dtype = args.dtype("output_dtype");
  if (dtype != DType::kInt8 && dtype != DType::kInt16)
    args.fail(std::string("attribute 'output_dtype' ") + dtype_name(dtype) +
              " must be int8 or int16");
  RequantizeS16Params p;
  p.size = input.numel();
  p.int16_input = input.dtype == DType::kInt16;
  p.int16_output = dtype == DType::kInt16;
  const int64_t in_lo = p.int16_input ? 0 : -128, in_hi = p.int16_input ? 0 : 127;
  const int64_t lo = p.int16_output ? -32768 : -128, hi = p.int16_output ? 32767 : 127;
  p.input_offset = -int32_attr(args, "input_zero_point", in_lo, in_hi);
  read_output_requantization(args, "output_zero_point", lo, hi, &p);
  return p;
}

}  // namespace

void register_cortex_m_requantize_s16(OpRegistry& registry) {
  OpSchema s;
  s.name = "cortex_m.requantize_s16.default";
  s.inputs = {{"input"}};
  for (const char* name : {"input_zero_point", "output_zero_point", "output_multiplier",
                           "output_shift"})
    s.attrs.push_back({name, AttrKind::kInt});
  s.attrs.push_back({"output_dtype", AttrKind::kDType});
  s.attrs.push_back({"activation_min", AttrKind::kInt});
  s.attrs.push_back({"activation_max", AttrKind::kInt});
  s.infer = [](const InferContext& ctx) {
    require_dtype(ctx, 0, {DType::kInt8, DType::kInt16});
    const RequantizeS16Params p = decode(ctx, ctx.input(0));
    if (!p.int16_input && !p.int16_output)
      ctx.fail("int8 input and output_dtype int8: that is cortex_m.requantize");
    check_kernel(ctx, requantize_s16_prepare(p));
    TensorInfo out = make_info(p.int16_output ? DType::kInt16 : DType::kInt8, ctx.input(0).shape);
    out.dim_order = ctx.input(0).dim_order;
    return std::vector<TensorInfo>{out};
  };
  s.kernel = [](const KernelContext& ctx) {
    const RequantizeS16Params p = decode(ctx, ctx.input(0).info());
    if (!p.int16_input) {
      requantize_s16(p, ctx.input(0).data<int8_t>(), ctx.output().data<int16_t>());
    } else if (p.int16_output) {
      requantize_s16(p, ctx.input(0).data<int16_t>(), ctx.output().data<int16_t>());
    } else {
      requantize_s16(p, ctx.input(0).data<int16_t>(), ctx.output().data<int8_t>());
    }
  };
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    return program::encoded(fb::KernelId_RequantizeS16,
                            program::encode_requantize(b.fbb(), decode(node, node.input(0))));
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
