// aten.upsample_bilinear2d.default (float32): NCHW bilinear resize to output_size (OH, OW) with
// torch's CPU arithmetic in float32; scales (empty, or (scale_h, scale_w) where a non-positive one
// is absent) give the half-pixel step 1 / scale as torch does. Its lowered form
// cortex_m.quantized_upsample_bilinear2d.default (int8 / int16, per-tensor qparams the output
// keeps): TFLite Micro's RESIZE_BILINEAR with 10-bit coordinates. Contiguous input
// (portable::upsample_bilinear2d_*).
#include "cortexm/portable/upsample_bilinear2d.h"

#include <cmath>

#include "ops/portable_call.h"
#include "program/params_builder.h"

namespace cortexm::ops {

namespace {

// The (scale_h, scale_w) torch's half-pixel coordinate divides by; 0 where absent.
std::pair<double, double> scales_of(const OpArgs& args) {
  const std::vector<double>& scales = args.floats("scales");
  if (scales.empty()) return {0.0, 0.0};
  return {scales[0], scales[1]};
}

// quantized: TFLite's integer kernel, which takes its steps from the sizes.
portable::UpsampleBilinear2dParams bilinear_params(const OpArgs& args, const std::vector<int64_t>& input,
                                                   bool quantized) {
  portable::UpsampleBilinear2dParams p;
  p.input = portable_shape(args, input);
  p.out_h = args.ints("output_size")[0];
  p.out_w = args.ints("output_size")[1];
  p.align_corners = args.b("align_corners");
  if (quantized) return p;
  const auto [scale_h, scale_w] = scales_of(args);
  p.step_h = portable::upsample_bilinear2d_step(input[2], p.out_h, p.align_corners, scale_h);
  p.step_w = portable::upsample_bilinear2d_step(input[3], p.out_w, p.align_corners, scale_w);
  return p;
}

std::vector<TensorInfo> infer(const InferContext& ctx, bool quantized) {
  require_rank(ctx, 0, {4});
  if (quantized)
    require_dtype(ctx, 0, {DType::kInt8, DType::kInt16});
  else
    require_dtype(ctx, 0, {DType::kFloat32});
  const TensorInfo& in = ctx.input(0);
  if (quantized && (!in.qparams || in.qparams->per_channel()))
    ctx.fail("self of " + std::string(dtype_name(in.dtype)) + " needs per-tensor qparams");
  if (in.effective_dim_order() != contiguous_dim_order(4)) ctx.fail("self must be contiguous");
  const std::vector<int64_t>& size = ctx.ints("output_size");
  if (size.size() != 2) ctx.fail("attribute 'output_size' = " + shape_to_string(size) + " must be (OH, OW)");
  if (size[0] < 1 || size[1] < 1)
    ctx.fail("attribute 'output_size' = " + shape_to_string(size) + " must be positive");
  if (!quantized) {
    const std::vector<double>& scales = ctx.floats("scales");
    if (!scales.empty() && scales.size() != 2)
      ctx.fail("attribute 'scales' has " + std::to_string(scales.size()) + " values; it takes none or (scale_h, scale_w)");
    for (double s : scales)
      if (!std::isfinite(s)) ctx.fail("attribute 'scales' = " + std::to_string(s) + " must be finite");
  }
  if (in.shape[2] < 1 || in.shape[3] < 1) ctx.fail("input " + info_to_string(in) + " has an empty spatial dim");
  check_portable(ctx, "upsample_bilinear2d", portable::upsample_bilinear2d_prepare(bilinear_params(ctx, in.shape, quantized), quantized));
  return {moved_info(in, {in.shape[0], in.shape[1], size[0], size[1]})};
}

void register_bilinear(OpRegistry& registry, const char* name, bool quantized) {
  OpSchema s;
  s.name = name;
  s.inputs = {{"self"}};
  s.attrs = {{"output_size", AttrKind::kInts}, {"align_corners", AttrKind::kBool}};
  if (!quantized) s.attrs.push_back({"scales", AttrKind::kFloats, false, AttrValue(std::vector<double>{})});
  s.infer = [quantized](const InferContext& ctx) { return infer(ctx, quantized); };
  s.kernel = [quantized](const KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    const portable::UpsampleBilinear2dParams p = bilinear_params(ctx, in.shape(), quantized);
    check_portable(ctx, "upsample_bilinear2d", portable::upsample_bilinear2d_prepare(p, quantized));
    Tensor& out = ctx.output();
    if (in.dtype() == DType::kFloat32)
      portable::upsample_bilinear2d_f32(p, in.data<float>(), out.data<float>());
    else if (in.dtype() == DType::kInt8)
      portable::upsample_bilinear2d_s8(p, in.data<int8_t>(), out.data<int8_t>());
    else
      portable::upsample_bilinear2d_s16(p, in.data<int16_t>(), out.data<int16_t>());
  };
  if (quantized) {
    s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
      return program::encoded(fb::KernelId_QuantizedUpsampleBilinear2d,
                              fb::CreateQuantizedUpsampleBilinear2dParams(b.fbb(), node.b("align_corners")));
    };
  } else {
    s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
      const portable::UpsampleBilinear2dParams p = bilinear_params(node, node.input(0).shape, false);
      return program::encoded(fb::KernelId_FloatUpsampleBilinear2d,
                              fb::CreateUpsampleBilinear2dParams(b.fbb(), p.align_corners, p.step_h, p.step_w));
    };
    // The quantizer passes the input's qparams through the aten op.
    s.keeps_qparams = true;
  }
  registry.add(std::move(s));
}

}  // namespace

void register_aten_upsample_bilinear2d(OpRegistry& registry) {
  register_bilinear(registry, "aten.upsample_bilinear2d.default", false);
  register_bilinear(registry, "cortex_m.quantized_upsample_bilinear2d.default", true);
}

}  // namespace cortexm::ops
