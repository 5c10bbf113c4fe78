// aten.amax.default / aten.amin.default (float32; NaN wins, as torch) and their lowered forms
// cortex_m.quantized_amax.default / quantized_amin.default (int8 / int16 with per-tensor qparams,
// which the output keeps: exact): max / min over the listed dims (negative allowed, [] = every dim,
// none of them empty); keepdim keeps them with size 1 (portable::extremum_*).
// aten.argmax.default / aten.argmin.default (float32; the first NaN wins, as torch) and
// cortex_m.quantized_argmax.default / quantized_argmin.default (int8 / int16: dequantizing with a
// positive scale keeps order and ties, so the index is the float graph's): the int64 index of the
// first max / min along dim (a one-entry list) or over every dim ([]: the flat index)
// (portable::arg_extremum_*). The input must be contiguous.
#include "cortexm/portable/amax.h"
#include "ops/reduction/reduction.h"
#include "program/params_builder.h"

namespace cortexm::ops {

namespace {

// index: the output is the int64 index of the extremum (argmax / argmin), else the extremum.
std::vector<TensorInfo> infer(const InferContext& ctx, bool quantized, bool index) {
  if (quantized)
    require_dtype(ctx, 0, {DType::kInt8, DType::kInt16});
  else
    require_dtype(ctx, 0, {DType::kFloat32});
  const TensorInfo& in = ctx.input(0);
  if (quantized && (!in.qparams || in.qparams->per_channel() || !(in.qparams->scales[0] > 0)))
    ctx.fail("self of " + std::string(dtype_name(in.dtype)) + " needs per-tensor qparams with a positive scale");
  if (index && ctx.ints("dim").size() > 1)
    ctx.fail("attribute 'dim' = " + shape_to_string(ctx.ints("dim")) + " must name one dim or none");
  std::vector<int64_t> identity(static_cast<size_t>(in.rank()));
  for (size_t d = 0; d < identity.size(); ++d) identity[d] = static_cast<int64_t>(d);
  if (in.effective_dim_order() != identity) ctx.fail("self must be contiguous");
  const std::vector<bool> reduced = reduced_dims(ctx, in.rank());
  for (int64_t d = 0; d < in.rank(); ++d)
    if (reduced[static_cast<size_t>(d)] && in.shape[static_cast<size_t>(d)] == 0)
      ctx.fail("self " + shape_to_string(in.shape) + " has an empty reduced dim " + std::to_string(d));
  if (index) return {infer_reduction_shape(ctx, DType::kInt64)};
  TensorInfo out = infer_reduction_shape(ctx, in.dtype);
  out.qparams = passthrough_qparams(in);
  return {out};
}

template <typename T>
void run(const portable::MeanParams& params, portable::Extremum kind, bool index, const T* in, Tensor& out,
         void (*extremum)(const portable::MeanParams&, portable::Extremum, const T*, T*),
         void (*arg_extremum)(const portable::MeanParams&, portable::Extremum, const T*, int64_t*)) {
  if (index)
    arg_extremum(params, kind, in, out.data<int64_t>());
  else
    extremum(params, kind, in, out.data<T>());
}

void register_extremum(OpRegistry& registry, const char* name, portable::Extremum kind, bool quantized, bool index,
                       fb::KernelId kernel) {
  OpSchema s;
  s.name = name;
  s.inputs = {{"self"}};
  s.attrs = {{"dim", AttrKind::kInts}, {"keepdim", AttrKind::kBool, false, AttrValue(false)}};
  s.infer = [quantized, index](const InferContext& ctx) { return infer(ctx, quantized, index); };
  s.kernel = [kind, index](const KernelContext& ctx) {
    const portable::MeanParams params = reduction_params(ctx);
    check_portable(ctx, "extremum", portable::extremum_prepare(params));
    const Tensor& in = ctx.input(0);
    Tensor& out = ctx.output();
    if (in.dtype() == DType::kFloat32)
      run(params, kind, index, in.data<float>(), out, portable::extremum_f32, portable::arg_extremum_f32);
    else if (in.dtype() == DType::kInt8)
      run(params, kind, index, in.data<int8_t>(), out, portable::extremum_s8, portable::arg_extremum_s8);
    else
      run(params, kind, index, in.data<int16_t>(), out, portable::extremum_s16, portable::arg_extremum_s16);
  };
  s.encode = [kernel](program::ParamsBuilder& b, const NodeContext& node) {
    return program::encoded(kernel, fb::CreateMeanParams(b.fbb(), b.fbb().CreateVector(reduced_dim_list(node))));
  };
  // The quantizer passes the input's qparams through aten.amax / amin (an index has none).
  s.keeps_qparams = !quantized && !index;
  registry.add(std::move(s));
}

}  // namespace

void register_aten_amax_amin(OpRegistry& registry) {
  using portable::Extremum;
  register_extremum(registry, "aten.amax.default", Extremum::kMax, false, false, fb::KernelId_FloatAmax);
  register_extremum(registry, "aten.amin.default", Extremum::kMin, false, false, fb::KernelId_FloatAmin);
  register_extremum(registry, "cortex_m.quantized_amax.default", Extremum::kMax, true, false, fb::KernelId_Amax);
  register_extremum(registry, "cortex_m.quantized_amin.default", Extremum::kMin, true, false, fb::KernelId_Amin);
  register_extremum(registry, "aten.argmax.default", Extremum::kMax, false, true, fb::KernelId_FloatArgmax);
  register_extremum(registry, "aten.argmin.default", Extremum::kMin, false, true, fb::KernelId_FloatArgmin);
  register_extremum(registry, "cortex_m.quantized_argmax.default", Extremum::kMax, true, true, fb::KernelId_Argmax);
  register_extremum(registry, "cortex_m.quantized_argmin.default", Extremum::kMin, true, true, fb::KernelId_Argmin);
}

}  // namespace cortexm::ops
