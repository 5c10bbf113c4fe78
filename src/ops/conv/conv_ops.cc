// The cortex_m convolution ops (conv2d, depthwise, transposed, 16x8 and 16x16 conv2d), one
// descriptor each over one implementation: a logical NCHW (channels-last in memory) input, a 4-D
// int8 (16x16: int16) weight in
// the kernel's layout and an optional bias; the kernel's prepare step is the validation. Kernel
// params <-> program table: ops/conv/runtime/conv_codec.h.
#include <limits>

#include "cortexm/kernels/quantized_conv2d.h"
#include "cortexm/kernels/quantized_conv2d_s16.h"
#include "cortexm/kernels/quantized_conv2d_s16w16.h"
#include "cortexm/kernels/quantized_depthwise_conv2d.h"
#include "cortexm/kernels/quantized_transpose_conv2d.h"
#include "ops/cortex_m_util.h"
#include "ops/conv/runtime/conv_codec.h"
#include "program/params_builder.h"

namespace cortexm::ops {

namespace {

// Kernel params P and the per-channel requantization they point into.
template <class P>
struct ConvCall {
  P params;
  std::vector<int32_t> multipliers, shifts;

  ConvCall() = default;
  ConvCall(const ConvCall&) = delete;  // params points into the vectors
  ConvCall(ConvCall&&) = default;
};

// The kernel entry points of params P (activations T, bias Bias, weights W).
template <class P, class T, class Bias, class W = int8_t>
struct ConvKernel {
  Dims4 (*output_dims)(const P&);
  Error (*prepare)(const P&);
  size_t (*scratch_size)(const P&, Isa);
  void (*run)(const P&, const T*, const W*, const Bias*, T*, void*);

  // An op's extra schema setup (in place); a nested type, so add_conv does not deduce W from it.
  using InPlace = void (*)(OpSchema&, const ConvKernel<P, T, Bias, W>&);
};

template <class T>
constexpr DType kIntDType = sizeof(T) == 1 ? DType::kInt8 : DType::kInt16;

using program::kConvHasOffsets;
using program::kDepthwiseConv;
using program::kPlainConv;
using program::kTransposedConv;

template <class P, class T>
std::vector<AttrSpec> conv_attrs() {
  constexpr int64_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  std::vector<AttrSpec> attrs = {{"stride", AttrKind::kInts}, {"padding", AttrKind::kInts}};
  attrs.push_back({kTransposedConv<P> ? "output_padding" : "dilation", AttrKind::kInts});
  if constexpr (kDepthwiseConv<P>) attrs.push_back({"depth_multiplier", AttrKind::kInt});
  if constexpr (kConvHasOffsets<P>) {
    attrs.push_back({"input_offset", AttrKind::kInt});
    attrs.push_back({"output_offset", AttrKind::kInt});
  }
  attrs.push_back({"requantize_multipliers", AttrKind::kInts});
  attrs.push_back({"requantize_shifts", AttrKind::kInts});
  attrs.push_back({"activation_min", AttrKind::kInt, false, AttrValue(lo)});
  attrs.push_back({"activation_max", AttrKind::kInt, false, AttrValue(hi)});
  if constexpr (kPlainConv<P>)
    attrs.push_back({"bias_includes_input_offset", AttrKind::kBool, false, AttrValue(false)});
  attrs.push_back(scratch_bytes_attr());
  return attrs;
}

// The output channels: the weight's first dim, the last for a depthwise weight (IHWO).
template <class P>
int32_t output_channels(const P& p) {
  if constexpr (kDepthwiseConv<P>) return p.filter.c;
  else return p.filter.n;
}

// A window with a stride or dilation below 1 has no output size: the output is left empty and
// the kernel's prepare step names the attribute.
inline bool window_defined(const ConvGeometry& g) {
  return g.stride_h >= 1 && g.stride_w >= 1 && g.dilation_h >= 1 && g.dilation_w >= 1;
}

template <class P, class T, class Bias, class W>
ConvCall<P> decode(const ConvKernel<P, T, Bias, W>& k, const OpArgs& args, const TensorInfo& input,
                   const TensorInfo& weight) {
  constexpr int64_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  ConvCall<P> call;
  P& p = call.params;
  p.input = nchw_dims(input.shape);
  p.filter = dims4(weight.shape);
  if constexpr (kDepthwiseConv<P>)
    p.depth_multiplier = int32_attr(args, "depth_multiplier", 1, INT32_MAX);
  ConvGeometry g;
  std::tie(g.stride_h, g.stride_w) = pair_attr(args, "stride");
  if constexpr (kTransposedConv<P>)
    std::tie(p.output_padding_h, p.output_padding_w) = pair_attr(args, "output_padding");
  else
    std::tie(g.dilation_h, g.dilation_w) = pair_attr(args, "dilation");
  g.padding = padding_attr(args);
  program::set_conv_geometry(&p, g);
  ConvQuantParams q;
  if constexpr (kConvHasOffsets<P>) {
    q.input_offset = int32_attr(args, "input_offset", -127, 128);
    q.output_offset = int32_attr(args, "output_offset", -128, 127);
  }
  q.activation_min = int32_attr(args, "activation_min", lo, hi);
  q.activation_max = int32_attr(args, "activation_max", lo, hi);
  const auto channels = static_cast<size_t>(output_channels(p));
  call.multipliers = int32_list_attr(args, "requantize_multipliers", channels);
  call.shifts = int32_list_attr(args, "requantize_shifts", channels);
  q.multipliers = call.multipliers.data();
  q.shifts = call.shifts.data();
  program::set_conv_quant(&p, q);
  if constexpr (kPlainConv<P>) p.bias_includes_input_offset = args.b("bias_includes_input_offset");
  if (window_defined(g)) p.output = k.output_dims(p);
  return call;
}

template <class P, class T, class Bias, class W>
std::vector<TensorInfo> infer(const ConvKernel<P, T, Bias, W>& k, const InferContext& ctx) {
  constexpr DType dtype = kIntDType<T>;
  require_rank(ctx, 0, {4});
  require_dtype(ctx, 0, {dtype});
  for (int64_t d : ctx.input(0).shape)
    if (d < 1 || d > INT32_MAX)
      ctx.fail("input 0 shape " + shape_to_string(ctx.input(0).shape) +
               " has an extent outside [1, 2^31)");
  check_scratch_bytes(ctx);
  require_rank(ctx, 1, {4});
  require_dtype(ctx, 1, {kIntDType<W>});
  const ConvCall<P> call = decode(k, ctx, ctx.input(0), ctx.input(1));
  check_kernel(ctx, k.prepare(call.params));
  const int32_t channels = output_channels(call.params);
  if (ctx.has_input(2)) {
    require_dtype(ctx, 2, {sizeof(Bias) == 4 ? DType::kInt32 : DType::kInt64});
    if (ctx.input(2).shape != std::vector<int64_t>{channels})
      ctx.fail("bias " + shape_to_string(ctx.input(2).shape) + " must be [" +
               std::to_string(channels) + "]");
  }
  const Dims4& o = call.params.output;
  TensorInfo out = make_info(dtype, {o.n, o.c, o.h, o.w});
  out.dim_order = channels_last_dim_order(4);
  return {out};
}

template <class P, class T, class Bias, class W>
void run(const ConvKernel<P, T, Bias, W>& k, const KernelContext& ctx) {
  ConvCall<P> call = decode(k, ctx, ctx.input(0).info(), ctx.input(1).info());
  ctx.take_host_variant(&call.params);
  const std::vector<T> input = nchw_to_nhwc_as<T>(ctx.input(0));
  std::vector<T> output(static_cast<size_t>(call.params.output.elements()));
  // int64 words: aligned for every kernel's scratch.
  std::vector<int64_t> scratch(k.scratch_size(call.params, Isa::kScalar) / sizeof(int64_t) + 1);
  k.run(call.params, input.data(), ctx.input(1).data<W>(),
        ctx.has_input(2) ? ctx.input(2).data<Bias>() : nullptr, output.data(), scratch.data());
  nhwc_to_nchw_as(output, ctx.output());
}

template <class P, class T, class Bias, class W = int8_t>
void add_conv(OpRegistry& registry, const char* name, fb::KernelId kernel_id,
              ConvKernel<P, T, Bias, W> k,
              typename ConvKernel<P, T, Bias, W>::InPlace in_place = nullptr) {
  OpSchema s;
  s.name = name;
  s.inputs = {{"input"}, {"weight"}, {"bias", true}};
  s.attrs = conv_attrs<P, T>();
  s.fuses_activation = true;
  s.infer = [k](const InferContext& ctx) { return infer(k, ctx); };
  s.kernel = [k](const KernelContext& ctx) { run(k, ctx); };
  s.encode = [k, kernel_id](program::ParamsBuilder& b, const NodeContext& node) {
    const ConvCall<P> call = decode(k, node, node.input(0), node.input(1));
    return program::encoded(kernel_id, program::encode_conv(b.fbb(), call.params));
  };
  s.scratch = [k](const NodeContext& node, Isa isa) {
    return k.scratch_size(decode(k, node, node.input(0), node.input(1)).params, isa);
  };
  if (in_place) in_place(s, k);
  registry.add(std::move(s));
}

}  // namespace

// conv2d (grouped too): OHWI weight [C_out, KH, KW, C_in / groups], int32 bias.
void register_cortex_m_quantized_conv2d(OpRegistry& registry) {
  add_conv<Conv2dParams, int8_t, int32_t>(
      registry, "cortex_m.quantized_conv2d.default", fb::KernelId_QuantizedConv2d,
      {quantized_conv2d_output_dims, quantized_conv2d_prepare, quantized_conv2d_scratch_size,
       quantized_conv2d},
      [](OpSchema& s, const ConvKernel<Conv2dParams, int8_t, int32_t>& k) {
        // A pointwise conv's blocks of pixels overwrite input pixels already read (its header);
        // other convs never run in place (lag -1).
        s.in_place_input = 0;
        s.in_place_lag = [k](const NodeContext& node) {
          return quantized_conv2d_in_place_lag(decode(k, node, node.input(0), node.input(1)).params);
        };
      });
}

// depthwise: IHWO weight [1, KH, KW, C * m]; output channel c * m + j reads input channel c.
void register_cortex_m_quantized_depthwise_conv2d(OpRegistry& registry) {
  add_conv<DepthwiseConv2dParams, int8_t, int32_t>(
      registry, "cortex_m.quantized_depthwise_conv2d.default",
      fb::KernelId_QuantizedDepthwiseConv2d,
      {quantized_depthwise_conv2d_output_dims, quantized_depthwise_conv2d_prepare,
       quantized_depthwise_conv2d_scratch_size, quantized_depthwise_conv2d},
      [](OpSchema& s, const ConvKernel<DepthwiseConv2dParams, int8_t, int32_t>& k) {
        // Output pixels overwrite input pixels whose windows are read (its header).
        s.in_place_input = 0;
        s.in_place_lag = [k](const NodeContext& node) {
          return quantized_depthwise_conv2d_in_place_lag(decode(k, node, node.input(0), node.input(1)).params);
        };
      });
}

// transposed: OHWI weight [C_out, KH, KW, C_in] (groups 1, dilation 1), int32 bias.
void register_cortex_m_quantized_transpose_conv2d(OpRegistry& registry) {
  add_conv<TransposeConv2dParams, int8_t, int32_t>(
      registry, "cortex_m.quantized_transpose_conv2d.default",
      fb::KernelId_QuantizedTransposeConv2d,
      {quantized_transpose_conv2d_output_dims, quantized_transpose_conv2d_prepare,
       quantized_transpose_conv2d_scratch_size, quantized_transpose_conv2d});
}

// 16x8: int16 input and output, OHWI int8 weight, int64 bias.
void register_cortex_m_quantized_conv2d_s16(OpRegistry& registry) {
  add_conv<Conv2dS16Params, int16_t, int64_t>(
      registry, "cortex_m.quantized_conv2d_s16.default", fb::KernelId_QuantizedConv2dS16,
      {quantized_conv2d_s16_output_dims, quantized_conv2d_s16_prepare,
       quantized_conv2d_s16_scratch_size, quantized_conv2d_s16});
}

// 16x16: int16 input and output, OHWI int16 weight, int64 bias.
void register_cortex_m_quantized_conv2d_s16w16(OpRegistry& registry) {
  add_conv<Conv2dS16W16Params, int16_t, int64_t, int16_t>(
      registry, "cortex_m.quantized_conv2d_s16w16.default", fb::KernelId_QuantizedConv2dS16W16,
      {quantized_conv2d_s16w16_output_dims, quantized_conv2d_s16w16_prepare,
       quantized_conv2d_s16w16_scratch_size, quantized_conv2d_s16w16});
}

}  // namespace cortexm::ops
