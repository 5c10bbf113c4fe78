// aten.amax.default / aten.amin.default (float32; NaN wins, as torch) and their lowered forms
// cortex_m.quantized_amax.default / quantized_amin.default (int8 / int16 with per-tensor qparams,
// which the output keeps: exact): max / min over the listed dims (negative allowed, [] = every dim,
// none of them empty); keepdim keeps them with size 1 (portable::extremum_*). The input must be
// contiguous.
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
  if (quantized && (!in.qparams || in.qparams->per_channel()))
    ctx.fail("self of " + std::string(dtype_name(in.dtype)) + " needs per-tensor qparams");
  std::vector<int64_t> identity(static_cast<size_t>(in.rank()));
  for (size_t d = 0; d < identity.size(); ++d) identity[d] = static_cast<int64_t>(d);
  if (in.effective_dim_order() != identity) ctx.fail("self must be contiguous");
  const std::vector<bool> reduced = reduced_dims(ctx, in.rank());
  for (int64_t d = 0; d < in.rank(); ++d)
    if (reduced[static_cast<size_t>(d)] && in.shape[static_cast<size_t>(d)] == 0)
      ctx.fail("self " + shape_to_string(in.shape) + " has an empty reduced dim " + std::to_string(d));
  TensorInfo out = infer_reduction_shape(ctx, in.dtype);
  out.qparams = passthrough_qparams(in);
  return {out};
}

void register_extremum(OpRegistry& registry, const char* name, portable::Extremum kind, bool quantized,
                       fb::KernelId kernel) {
  OpSchema s;
  s.name = name;
  s.inputs = {{"self"}};
  s.attrs = {{"dim", AttrKind::kInts}, {"keepdim", AttrKind::kBool, false, AttrValue(false)}};
  s.infer = [quantized](const InferContext& ctx) { return infer(ctx, quantized); };
  s.kernel = [kind](const KernelContext& ctx) {
    const portable::MeanParams params = reduction_params(ctx);
    check_portable(ctx, "extremum", portable::extremum_prepare(params));
    const Tensor& in = ctx.input(0);
    Tensor& out = ctx.output();
    if (in.dtype() == DType::kFloat32)
      portable::extremum_f32(params, kind, in.data<float>(), out.data<float>());
    else if (in.dtype() == DType::kInt8)
      portable::extremum_s8(params, kind, in.data<int8_t>(), out.data<int8_t>());
    else
      portable::extremum_s16(params, kind, in.data<int16_t>(), out.data<int16_t>());
  };
  s.encode = [kernel](program::ParamsBuilder& b, const NodeContext& node) {
    return program::encoded(kernel, fb::CreateMeanParams(b.fbb(), b.fbb().CreateVector(reduced_dim_list(node))));
  };
  // The quantizer passes the input's qparams through the aten op.
  s.keeps_qparams = !quantized;
  registry.add(std::move(s));
}

}  // namespace

void register_aten_amax_amin(OpRegistry& registry) {
  register_extremum(registry, "aten.amax.default", portable::Extremum::kMax, false, fb::KernelId_FloatAmax);
  register_extremum(registry, "aten.amin.default", portable::Extremum::kMin, false, fb::KernelId_FloatAmin);
  register_extremum(registry, "cortex_m.quantized_amax.default", portable::Extremum::kMax, true,
                    fb::KernelId_Amax);
  register_extremum(registry, "cortex_m.quantized_amin.default", portable::Extremum::kMin, true,
                    fb::KernelId_Amin);
}

}  // namespace cortexm::ops
