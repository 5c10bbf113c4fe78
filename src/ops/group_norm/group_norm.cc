// aten.group_norm.default (torch.nn.GroupNorm, aten.native_group_norm's output 0): float32 [N, C, *]
// in num_groups groups of channels, optional weight and bias of shape [C]; a program runs it as
// the GroupNorm float fallback. aten.instance_norm.default (torch.nn.InstanceNorm1d / 2d / 3d with
// the input's statistics): the same with one group per channel, the same float fallback.
// cortex_m.quantized_group_norm: the int8 form of both (group_norm_kernels.h), contiguous or
// channels-last; the interpreter runs the scalar reference below, which is the layer-norm reference
// kernel over each (batch, group) set with per-channel weights spread over it.
// cortex_m.quantized_group_norm_s16: the int16 (16x8) form; the interpreter's reference below
// computes its arithmetic apart from the program's kernel (two passes, a bisection root).
#include <cmath>
#include <vector>

#include "cortexm/kernels/quantized_layer_norm.h"
#include "ops/cortex_m_util.h"
#include "ops/group_norm/runtime/group_norm_codec.h"
#include "ops/norm/norm_schema.h"
#include "ops/output_requantization.h"
#include "program/params_builder.h"

namespace cortexm::ops {

namespace {

// The shape of an [N, C, *] input split into num_groups groups (contiguous: the interpreter's data);
// instance norm: one group per channel.
GroupNormShape group_norm_shape(const OpArgs& args, const TensorInfo& in) {
  if (in.rank() < 2) args.fail("input " + shape_to_string(in.shape) + " must be [N, C, *] (rank >= 2)");
  int64_t spatial = 1;
  for (size_t d = 2; d < in.shape.size(); ++d) spatial *= in.shape[d];
  const bool instance = args.op() == "aten.instance_norm.default";
  const int64_t n = in.shape[0], c = in.shape[1], groups = instance ? c : args.i("num_groups");
  if (n < 1 || c < 1 || spatial < 1) args.fail("input " + shape_to_string(in.shape) + " must not be empty");
  if (n > INT32_MAX || c > INT32_MAX || spatial > INT32_MAX)
    args.fail("input " + shape_to_string(in.shape) + " is too large");
  if (groups < 1 || groups > c || c % groups != 0)
    args.fail("attribute 'num_groups' = " + std::to_string(groups) + " must divide the " + std::to_string(c) +
              " channels of input " + shape_to_string(in.shape));
  GroupNormShape s;
  s.batches = static_cast<int32_t>(n);
  s.channels = static_cast<int32_t>(c);
  s.spatial = static_cast<int32_t>(spatial);
  s.groups = static_cast<int32_t>(groups);
  return s;
}

// Inputs 1 (weight) and 2 (bias), when present: `dtype`, one value per channel.
void require_channel_operands(const InferContext& ctx, const GroupNormShape& s, DType weight, DType bias) {
  const char* names[] = {"", "weight", "bias"};
  const DType dtypes[] = {DType::kFloat32, weight, bias};
  for (size_t i : {size_t{1}, size_t{2}}) {
    if (!ctx.has_input(i)) continue;
    require_dtype(ctx, i, {dtypes[i]});
    if (ctx.input(i).numel() != s.channels || ctx.input(i).rank() != 1)
      ctx.fail(std::string(names[i]) + " " + info_to_string(ctx.input(i)) + " must have shape [" +
               std::to_string(s.channels) + "], one value per channel");
  }
}

// --- float ---------------------------------------------------------------------------------------

float checked_eps(const OpArgs& args) {
  const double eps = args.f("eps");
  if (!std::isfinite(eps) || eps < 0.0 || eps > 3.4e38)
    args.fail("attribute 'eps' = " + std::to_string(eps) + " must be finite, >= 0 and a float32");
  return static_cast<float>(eps);
}

std::vector<TensorInfo> infer_float(const InferContext& ctx) {
  require_dtype(ctx, 0, {DType::kFloat32});
  const GroupNormShape s = group_norm_shape(ctx, ctx.input(0));
  checked_eps(ctx);
  require_channel_operands(ctx, s, DType::kFloat32, DType::kFloat32);
  return same_as_input(ctx);
}

void kernel_float(const KernelContext& ctx) {
  const GroupNormShape s = group_norm_shape(ctx, ctx.input(0).info());
  group_norm_f32(s, checked_eps(ctx), ctx.input(0).data<float>(),
                 ctx.has_input(1) ? ctx.input(1).data<float>() : nullptr,
                 ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr, ctx.output().data<float>());
}

// --- int8 ----------------------------------------------------------------------------------------

// The attributes on the output's range [lo, hi].
QuantizedGroupNormParams decode_in_range(const OpArgs& args, const TensorInfo& input, int64_t lo, int64_t hi) {
  QuantizedGroupNormParams p;
  p.shape = group_norm_shape(args, input);
  p.shape.channels_last = !input.contiguous();
  p.norm.eps_term = args.i("eps_term");
  p.norm.product_shift = int32_attr(args, "product_shift", 0, 31);
  read_output_requantization(args, "output_zero_point", lo, hi, &p.norm);
  return p;
}

QuantizedGroupNormParams decode(const OpArgs& args, const TensorInfo& input) {
  return decode_in_range(args, input, -128, 127);
}

// int16: output_zero_point 0 and the activation range within int16.
QuantizedGroupNormParams decode_s16(const OpArgs& args, const TensorInfo& input) {
  int32_attr(args, "output_zero_point", 0, 0);
  return decode_in_range(args, input, -32768, 32767);
}

bool is_s16(const OpArgs& args) { return args.op() == "cortex_m.quantized_group_norm_s16.default"; }

std::vector<TensorInfo> infer_quantized(const InferContext& ctx) {
  const DType dtype = is_s16(ctx) ? DType::kInt16 : DType::kInt8;
  require_dtype(ctx, 0, {dtype});
  const TensorInfo& in = ctx.input(0);
  if (!in.contiguous() && !(in.rank() == 4 && in.effective_dim_order() == channels_last_dim_order(4)))
    ctx.fail("input " + info_to_string(in) + " must be contiguous or channels-last");
  const QuantizedGroupNormParams p = is_s16(ctx) ? decode_s16(ctx, in) : decode(ctx, in);
  check_kernel(ctx, is_s16(ctx) ? quantized_group_norm_s16_prepare(p) : quantized_group_norm_prepare(p));
  require_channel_operands(ctx, p.shape, DType::kInt16, DType::kInt32);
  TensorInfo out = make_info(dtype, in.shape);
  out.dim_order = in.dim_order;
  return {out};
}

// The reference: for each (batch, group), the set's values gathered in (channel, spatial) order,
// quantized_layer_norm_reference over them as one row with each value's channel weight and bias.
void kernel_quantized(const KernelContext& ctx) {
  const QuantizedGroupNormParams p = decode(ctx, ctx.input(0).info());
  const GroupNormShape s = p.shape;  // the interpreter's data is contiguous whatever the dim order
  const int8_t* in = ctx.input(0).data<int8_t>();
  const int16_t* weight = ctx.has_input(1) ? ctx.input(1).data<int16_t>() : nullptr;
  const int32_t* bias = ctx.has_input(2) ? ctx.input(2).data<int32_t>() : nullptr;
  int8_t* out = ctx.output().data<int8_t>();
  const int64_t set_size = int64_t{s.group_channels()} * s.spatial;
  LayerNormParams row = p.norm;
  row.rows = 1;
  row.row_size = static_cast<int32_t>(set_size);
  std::vector<int16_t> row_weight(weight ? set_size : 0);
  std::vector<int32_t> row_bias(bias ? set_size : 0);
  for (int64_t n = 0; n < s.batches; ++n)
    for (int64_t g = 0; g < s.groups; ++g) {
      const int64_t first = (n * s.channels + g * s.group_channels()) * s.spatial;
      for (int64_t j = 0; j < set_size; ++j) {
        const int64_t c = g * s.group_channels() + j / s.spatial;
        if (weight) row_weight[j] = weight[c];
        if (bias) row_bias[j] = bias[c];
      }
      quantized_layer_norm_reference(row, in + first, weight ? row_weight.data() : nullptr,
                                     bias ? row_bias.data() : nullptr, out + first);
    }
}

// floor(sqrt(m)) by bisection (m < 2^62).
int64_t bisection_floor_sqrt(uint64_t m) {
  uint64_t lo = 0, hi = uint64_t{1} << 31;  // lo^2 <= m < hi^2
  while (hi - lo > 1) {
    const uint64_t mid = (lo + hi) / 2;
    if (mid * mid <= m) lo = mid; else hi = mid;
  }
  return static_cast<int64_t>(lo);
}

// The int16 reference: per (batch, group) set of n values in contiguous (channel, spatial) order,
// W = n * sum q^2 - S^2 + eps_term, the inverse root from a bisection, then each value's output.
void kernel_quantized_s16(const KernelContext& ctx) {
  const QuantizedGroupNormParams p = decode_s16(ctx, ctx.input(0).info());
  const GroupNormShape s = p.shape;  // the interpreter's data is contiguous whatever the dim order
  const LayerNormParams& norm = p.norm;
  const int16_t* in = ctx.input(0).data<int16_t>();
  const int16_t* weight = ctx.has_input(1) ? ctx.input(1).data<int16_t>() : nullptr;
  const int32_t* bias = ctx.has_input(2) ? ctx.input(2).data<int32_t>() : nullptr;
  int16_t* out = ctx.output().data<int16_t>();
  const int64_t n = int64_t{s.group_channels()} * s.spatial;
  for (int64_t b = 0; b < s.batches; ++b)
    for (int64_t g = 0; g < s.groups; ++g) {
      const int64_t first = (b * s.channels + g * s.group_channels()) * s.spatial;
      int64_t sum = 0;
      for (int64_t j = 0; j < n; ++j) sum += in[first + j];
      int64_t sum_sq = 0;
      for (int64_t j = 0; j < n; ++j) sum_sq += int64_t{in[first + j]} * in[first + j];
      int64_t w = n * sum_sq - sum * sum + norm.eps_term;
      if (w == 0) w = 1;
      int32_t k = 0;
      while ((static_cast<uint64_t>(w) << (2 * k)) < (uint64_t{1} << 60)) ++k;
      const int64_t root = bisection_floor_sqrt(static_cast<uint64_t>(w) << (2 * k));
      const int64_t inv = ((int64_t{1} << 61) + root / 2) / root;  // round(2^61 / root), halves up
      const int32_t z_shift = 61 - kGroupNormS16FractionBits - k;
      for (int64_t j = 0; j < n; ++j) {
        const int64_t c = g * s.group_channels() + j / s.spatial;
        const int64_t d = n * in[first + j] - sum;
        const int64_t z = (d * inv + (int64_t{1} << (z_shift - 1))) >> z_shift;
        int64_t product = z * (weight ? weight[c] : 1);
        if (norm.product_shift > 0)
          product = (product + (int64_t{1} << (norm.product_shift - 1))) >> norm.product_shift;
        const int32_t acc = wrapping_add(static_cast<int32_t>(product), bias ? bias[c] : 0);
        int32_t v = wrapping_add(requantize(acc, norm.multiplier, norm.shift), norm.output_offset);
        v = v < norm.activation_min ? norm.activation_min : (v > norm.activation_max ? norm.activation_max : v);
        out[first + j] = static_cast<int16_t>(v);
      }
    }
}

}  // namespace

namespace {

// The float group norms: input, optional weight and bias, the float GroupNorm kernel.
void register_float_group_norm(OpRegistry& registry, const char* name, std::vector<AttrSpec> attrs) {
  OpSchema s;
  s.name = name;
  s.inputs = {{"input"}, {"weight", true}, {"bias", true}};
  s.attrs = std::move(attrs);
  s.infer = infer_float;
  s.kernel = kernel_float;
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    const GroupNormShape shape = group_norm_shape(node, node.input(0));
    const auto params = fb::CreateGroupNormParams(b.fbb(), shape.groups, checked_eps(node));
    return program::encoded(fb::KernelId_GroupNorm, params);
  };
  registry.add(std::move(s));
}

}  // namespace

void register_aten_group_norm(OpRegistry& registry) {
  register_float_group_norm(registry, "aten.group_norm.default",
                            {{"num_groups", AttrKind::kInt}, {"eps", AttrKind::kFloat, false, AttrValue(1e-5)}});
}

// Instance norm with the input's statistics: group norm with one group per channel (the handler in
// python/cortexm/ops/group_norm.py makes running statistics a per-channel affine instead).
void register_aten_instance_norm(OpRegistry& registry) {
  register_float_group_norm(registry, "aten.instance_norm.default",
                            {{"eps", AttrKind::kFloat, false, AttrValue(1e-5)}});
}

namespace {

// The int8 and int16 quantized group norms, on the output dtype's range [lo, hi].
void register_quantized_group_norm(OpRegistry& registry, const char* name, int64_t lo, int64_t hi, bool symmetric,
                                   KernelFn kernel, fb::KernelId id,
                                   QuantizedGroupNormParams (*decode_params)(const OpArgs&, const TensorInfo&)) {
  OpSchema s;
  s.name = name;
  s.inputs = {{"input"}, {"weight", true}, {"bias", true}};
  s.attrs = norm_attrs("num_groups", lo, hi, symmetric);
  s.fuses_activation = true;  // the output is clamped to activation_min / activation_max last
  s.infer = infer_quantized;
  s.kernel = std::move(kernel);
  s.encode = [id, decode_params](program::ParamsBuilder& b, const NodeContext& node) {
    return program::encoded(id, program::encode_group_norm(b.fbb(), decode_params(node, node.input(0))));
  };
  registry.add(std::move(s));
}

}  // namespace

void register_cortex_m_quantized_group_norm(OpRegistry& registry) {
  register_quantized_group_norm(registry, "cortex_m.quantized_group_norm.default", -128, 127, false, kernel_quantized,
                                fb::KernelId_QuantizedGroupNorm, decode);
}

void register_cortex_m_quantized_group_norm_s16(OpRegistry& registry) {
  register_quantized_group_norm(registry, "cortex_m.quantized_group_norm_s16.default", -32768, 32767, true,
                                kernel_quantized_s16, fb::KernelId_QuantizedGroupNormS16, decode_s16);
}

}  // namespace cortexm::ops
