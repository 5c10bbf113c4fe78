// aten.argmax.default / aten.argmin.default (float32; the first NaN wins, as torch) and their
// lowered forms cortex_m.quantized_argmax.default / quantized_argmin.default (int8 / int16 with a
// positive per-tensor scale: dequantizing keeps order and ties, so the index is the float graph's):
// the int64 index of the first max / min along dim (a one-entry list) or over every dim ([]: the
// flat index), keepdim keeping the reduced dims with size 1 (portable::arg_extremum_*). The input
// must be contiguous.
#include "cortexm/portable/amax.h"
#include "ops/aten/reduction.h"
#include "program/params_builder.h"

namespace cortexm::ops {

namespace {

std::vector<TensorInfo> infer(const InferContext& ctx, bool quantized) {
  if (quantized)
    require_dtype(ctx, 0, {DType::kInt8, DType::kInt16});
  else
    require_dtype(ctx, 0, {DType::kFloat32});
  const TensorInfo& in = ctx.input(0);
  if (quantized && (!in.qparams || in.qparams->per_channel() || !(in.qparams->scales[0] > 0)))
    ctx.fail("self of " + std::string(dtype_name(in.dtype)) + " needs per-tensor qparams with a positive scale");
  if (ctx.ints("dim").size() > 1)
    ctx.fail("attribute 'dim' = " + shape_to_string(ctx.ints("dim")) + " must name one dim or none");
  std::vector<int64_t> identity(static_cast<size_t>(in.rank()));
  for (size_t d = 0; d < identity.size(); ++d) identity[d] = static_cast<int64_t>(d);
  if (in.effective_dim_order() != identity) ctx.fail("self must be contiguous");
  const std::vector<bool> reduced = reduced_dims(ctx, in.rank());
  for (int64_t d = 0; d < in.rank(); ++d)
    if (reduced[static_cast<size_t>(d)] && in.shape[static_cast<size_t>(d)] == 0)
      ctx.fail("self " + shape_to_string(in.shape) + " has an empty reduced dim " + std::to_string(d));
  return {infer_reduction_shape(ctx, DType::kInt64)};
}

void register_arg_extremum(OpRegistry& registry, const char* name, portable::Extremum kind, bool quantized,
                           fb::KernelId kernel) {
  OpSchema s;
  s.name = name;
  s.inputs = {{"self"}};
  s.attrs = {{"dim", AttrKind::kInts}, {"keepdim", AttrKind::kBool, false, AttrValue(false)}};
  s.infer = [quantized](const InferContext& ctx) { return infer(ctx, quantized); };
  s.kernel = [kind](const KernelContext& ctx) {
    const portable::MeanParams params = reduction_params(ctx);
    check_portable(ctx, "arg extremum", portable::extremum_prepare(params));
    const Tensor& in = ctx.input(0);
    int64_t* out = ctx.output().data<int64_t>();
    if (in.dtype() == DType::kFloat32)
      portable::arg_extremum_f32(params, kind, in.data<float>(), out);
    else if (in.dtype() == DType::kInt8)
      portable::arg_extremum_s8(params, kind, in.data<int8_t>(), out);
    else
      portable::arg_extremum_s16(params, kind, in.data<int16_t>(), out);
  };
  s.encode = [kernel](program::ParamsBuilder& b, const NodeContext& node) {
    return program::encoded(kernel, fb::CreateMeanParams(b.fbb(), b.fbb().CreateVector(reduced_dim_list(node))));
  };
  registry.add(std::move(s));
}

}  // namespace

void register_aten_argmax_argmin(OpRegistry& registry) {
  register_arg_extremum(registry, "aten.argmax.default", portable::Extremum::kMax, false, fb::KernelId_FloatArgmax);
  register_arg_extremum(registry, "aten.argmin.default", portable::Extremum::kMin, false, fb::KernelId_FloatArgmin);
  register_arg_extremum(registry, "cortex_m.quantized_argmax.default", portable::Extremum::kMax, true,
                        fb::KernelId_Argmax);
  register_arg_extremum(registry, "cortex_m.quantized_argmin.default", portable::Extremum::kMin, true,
                        fb::KernelId_Argmin);
}

}  // namespace cortexm::ops
