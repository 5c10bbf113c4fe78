// ConvertToCortexM, convolutions: aten.convolution.default (2-D, or 1-D through view_copy to
// (N, C, 1, W)) -> _clone_dim_order to channels-last, cortex_m.quantized_depthwise_conv2d when
// groups == C_in > 1 and C_out % C_in == 0 (IHWO weight), else cortex_m.quantized_conv2d (OHWI weight,
// grouped too), _clone_dim_order back. A float output read only by a clamp activation (the
// quantizer's conv + hardsigmoid) is lowered with it (output_target).
#include "passes/convert_to_cortex_m.h"

namespace cortexm::convert {

namespace {

void convert_conv(Graph& graph, NodeId id, const TargetConfig& /*target_config*/) {
  weight_dtype(graph, graph.node(id).inputs[0], graph.node(id).inputs[1], "weight");  // NotLowered for int16 weights
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const OpArgs args(node.op, node.name, node.attrs);
  if (args.b("transposed")) not_lowered("transposed convolution");
  const ConvOperands conv = conv_operands(graph, node, "input rank");
  const ValueId x = conv.x, w = conv.w, b = conv.b;
  const TensorInfo& in = conv.in;
  const bool one_d = conv.one_d;
  const QuantParams q_in = int8_per_tensor(graph, x, "input");
  const OutputTarget target = output_target(graph, node);
  const QuantParams& q_out = target.q;
  const TensorInfo out = graph.value(target.value).info;

  const std::vector<int64_t> ws = graph.value(w).info.shape;
  const int64_t c_out = ws[0], c_per_group = ws[1];
  const int64_t kh = one_d ? 1 : ws[2], kw = ws.back();
  const int64_t c_in = in.shape[1];
  const int64_t groups = args.i("groups");
  const QuantizedConstant weight = int8_constant(graph, w, 0, c_out, "weight");
  for (int64_t zp : weight.zero_points)
    if (zp != 0)
      not_lowered("weight zero point " + std::to_string(zp) +
                  " (the conv kernels take symmetric weights)");
  const std::vector<int64_t> stride = conv_spatial(args, "stride", one_d, 1);
  const std::vector<int64_t> padding = conv_spatial(args, "padding", one_d, 0);
  const std::vector<int64_t> dilation = conv_spatial(args, "dilation", one_d, 1);
  // One input channel is a regular conv (its im2col kernels beat a depth multiplier of C_out).
  const bool depthwise = groups == c_in && c_in > 1 && c_out % c_in == 0;

  const ChannelRequantization requantization = channel_requantization(
      graph, b, q_in.scales[0], weight.scales, q_out.scales[0], target.scale, target, Accumulator::kInt32);

  // Weights: OHWI [C_out, KH, KW, C_in / groups]; depthwise IHWO [1, KH, KW, C_out].
  Tensor packed = depthwise ? repacked_weight(graph, w, DType::kInt8, {1, kh, kw, c_out}, 3)
                            : repacked_weight(graph, w, DType::kInt8, {c_out, kh, kw, c_per_group}, 0);
  const int8_t* src = weight.data.data<int8_t>();
  int8_t* dst = packed.data<int8_t>();
  for (int64_t o = 0; o < c_out; ++o)
    for (int64_t i = 0; i < c_per_group; ++i)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t x0 = 0; x0 < kw; ++x0) {
          const int8_t v = src[((o * c_per_group + i) * kh + y) * kw + x0];
          if (depthwise) dst[(y * kw + x0) * c_out + o] = v;
          else dst[((o * kh + y) * kw + x0) * c_per_group + i] = v;
        }
  Attrs attrs = {{"stride", stride}, {"padding", padding}, {"dilation", dilation}};
  if (depthwise) attrs.emplace_back("depth_multiplier", c_out / c_in);
  attrs.insert(attrs.end(), {{"input_offset", -q_in.zero_points[0]},
                             {"output_offset", q_out.zero_points[0]}});

  const ValueId v = conv_kernel_input(rw, conv);
  const ValueId w_packed = rw.constant(depthwise ? "ihwo" : "ohwi", packed);
  const ValueId y = rw.call_requantized(depthwise ? "cortex_m.quantized_depthwise_conv2d.default"
                                                  : "cortex_m.quantized_conv2d.default",
                                        {v, w_packed}, attrs, requantization, target);
  commit_conv_output(rw, y, conv, out, target);
}

}  // namespace

// The int8 input's (convert_conv_s16.cc: int16; convert_transpose_conv.cc: transposed).
CORTEXM_CONVERTER(conv) {
  static const Converter converter{
      {"aten.convolution.default"}, convert_conv, Form::kFolded, [](const Graph& graph, const Node& node) {
        return !is_transposed_conv(node) && graph.value(node.inputs[0]).info.dtype != DType::kInt16;
      }};
  return converter;
}

}  // namespace cortexm::convert
