// ConvertToCortexM, transposed convolutions: aten.convolution.default with transposed = True
// (2-D, or 1-D through view_copy to (N, C, 1, W); groups 1, dilation 1) -> _clone_dim_order to
// channels-last, cortex_m.quantized_transpose_conv2d (torch's weight [C_in, C_out, KH, KW] repacked
// OHWI [C_out, KH, KW, C_in], per-channel multipliers s_in * s_w[c] / s_out, int32 bias at
// s_in * s_w[c]), _clone_dim_order back.
#include "passes/convert_to_cortex_m.h"

namespace cortexm::convert {

namespace {

void convert_transpose_conv(Graph& graph, NodeId id, const TargetConfig& /*target_config*/) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const OpArgs args(node.op, node.name, node.attrs);
  const ConvOperands conv = conv_operands(graph, node, "transposed convolution of rank");
  const ValueId x = conv.x, w = conv.w, b = conv.b;
  const bool one_d = conv.one_d;
  if (args.i("groups") != 1) not_lowered("transposed convolution with groups != 1");
  const std::vector<int64_t> dilation = conv_spatial(args, "dilation", one_d, 1);
  if (dilation[0] != 1 || dilation[1] != 1) not_lowered("transposed convolution with dilation > 1");
  const std::vector<int64_t> stride = conv_spatial(args, "stride", one_d, 1);
  const std::vector<int64_t> padding = conv_spatial(args, "padding", one_d, 0);
  const std::vector<int64_t> output_padding = conv_spatial(args, "output_padding", one_d, 0);
  const QuantParams q_in = int8_per_tensor(graph, x, "input");
  const OutputTarget target = output_target(graph, node);
  const QuantParams& q_out = target.q;
  const TensorInfo out = graph.value(target.value).info;

  const std::vector<int64_t> ws = graph.value(w).info.shape;  // [C_in, C_out, KH, KW] or [C_in, C_out, KW]
  const int64_t c_in = ws[0], c_out = ws[1], kh = one_d ? 1 : ws[2], kw = ws.back();
  const QuantizedConstant weight = int8_constant(graph, w, 1, c_out, "weight");
  for (int64_t zp : weight.zero_points)
    if (zp != 0) not_lowered("weight zero point " + std::to_string(zp) + " (symmetric weights only)");

  const ChannelRequantization requantization = channel_requantization(
      graph, b, q_in.scales[0], weight.scales, q_out.scales[0], target.scale, target, Accumulator::kInt32);

  Tensor packed = repacked_weight(graph, w, DType::kInt8, {c_out, kh, kw, c_in}, 0);
  const int8_t* src = weight.data.data<int8_t>();
  int8_t* dst = packed.data<int8_t>();
  for (int64_t i = 0; i < c_in; ++i)
    for (int64_t o = 0; o < c_out; ++o)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t x0 = 0; x0 < kw; ++x0)
          dst[((o * kh + y) * kw + x0) * c_in + i] = src[((i * c_out + o) * kh + y) * kw + x0];

  const ValueId xc = conv_kernel_input(rw, conv);
  const ValueId w_packed = rw.constant("ohwi", packed);
  const ValueId y = rw.call_requantized("cortex_m.quantized_transpose_conv2d.default", {xc, w_packed},
                                        {{"stride", stride},
                                         {"padding", padding},
                                         {"output_padding", output_padding},
                                         {"input_offset", -q_in.zero_points[0]},
                                         {"output_offset", q_out.zero_points[0]}},
                                        requantization, target);
  commit_conv_output(rw, y, conv, out, target);
}

}  // namespace

CORTEXM_CONVERTER(transpose_conv) {
  static const Converter converter{{"aten.convolution.default"}, convert_transpose_conv, Form::kFolded,
                                   [](const Graph&, const Node& node) { return is_transposed_conv(node); }};
  return converter;
}

}  // namespace cortexm::convert
