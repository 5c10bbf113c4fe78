// ConvertToCortexM, 16x8 and 16x16 convolutions: aten.convolution.default (2-D, or 1-D through
// view_copy to (N, C, 1, W)) reading a symmetric int16 value -> _clone_dim_order to channels-last,
// cortex_m.quantized_conv2d_s16 (OHWI int8 weight, grouped too, int64 bias) or, for an int16
// weight, cortex_m.quantized_conv2d_s16w16 (same geometry and packing), _clone_dim_order back.
// An int16 output is the kernel's; an int8 output (or a clamp activation's, output_target) gets
// an int16 value at the scale spanning the int8 range, then cortex_m.requantize_s16 to int8 with
// the activation's bounds.
#include <cmath>

#include "cortexm/kernels/requantize.h"
#include "cortexm/kernels/requantize_s16.h"
#include "passes/convert_to_cortex_m.h"

namespace cortexm::convert {

QuantParams int16_per_tensor(const Graph& graph, ValueId v, const std::string& what) {
  if (v == kNoValue) not_lowered(what + " is absent");
  const Value& value = graph.value(v);
  const TensorInfo& info = value.info;
  if (info.dtype != DType::kInt16 || !info.qparams || info.qparams->per_channel())
    not_lowered(what + " '" + value.name + "' is not an int16 per-tensor quantized value");
  const QuantParams& q = *info.qparams;
  if (!(std::isfinite(q.scales[0]) && q.scales[0] > 0.0))
    not_lowered(what + " '" + value.name + "' has a scale that is not finite and > 0");
  if (q.zero_points[0] != 0 || q.quant_min < -32768 || q.quant_max > 32767 ||
      q.quant_min > q.quant_max)
    not_lowered(what + " '" + value.name + "' is not symmetric int16 (zero point 0)");
  return q;
}

DType weight_dtype(const Graph& graph, ValueId x, ValueId w, const std::string& what) {
  const DType dtype = graph.value(w).info.dtype;
  if (dtype != DType::kInt16) return DType::kInt8;
  const TensorInfo& in = graph.value(x).info;
  if (in.dtype != DType::kInt16)
    not_lowered("int16 " + what + " '" + graph.value(w).name + "' (16x16) needs a symmetric int16 input; input '" +
                graph.value(x).name + "' is " + dtype_name(in.dtype));
  return dtype;
}

namespace {

// OIHW (O, C_in / groups, KH, KW) -> OHWI, for either weight element type.
template <class T>
void pack_ohwi(const Tensor& src_tensor, Tensor* packed, int64_t c_out, int64_t c_per_group,
               int64_t kh, int64_t kw) {
  const T* src = src_tensor.data<T>();
  T* dst = packed->data<T>();
  for (int64_t o = 0; o < c_out; ++o)
    for (int64_t i = 0; i < c_per_group; ++i)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t x0 = 0; x0 < kw; ++x0)
          dst[((o * kh + y) * kw + x0) * c_per_group + i] =
              src[((o * c_per_group + i) * kh + y) * kw + x0];
}

void convert_conv_s16(Graph& graph, NodeId id, const TargetConfig& /*target_config*/) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const OpArgs args(node.op, node.name, node.attrs);
  const ConvOperands conv = conv_operands(graph, node, "input rank");
  const ValueId x = conv.x, w = conv.w, b = conv.b;
  const bool one_d = conv.one_d;
  const QuantParams q_in = int16_per_tensor(graph, x, "input");

  // The kernel's int16 output: the node's own, or a value spanning the int8 output's range.
  const TensorInfo& node_out = graph.value(node.outputs[0]).info;
  const bool int16_output = node_out.dtype == DType::kInt16;
  OutputTarget target;
  QuantParams q_conv;
  if (int16_output) {
    q_conv = int16_per_tensor(graph, node.outputs[0], "output");
    target.value = node.outputs[0];
  } else {
    target = output_target(graph, node);
    const QuantParams& q = target.q;
    const double span = std::max(std::fabs(double(q.quant_min - q.zero_points[0])),
                                 std::fabs(double(q.quant_max - q.zero_points[0])));
    q_conv.scales = {span * q.scales[0] / 32767.0 / target.scale};
    q_conv.zero_points = {0};
    q_conv.quant_min = -32768;
    q_conv.quant_max = 32767;
  }
  const TensorInfo out = graph.value(target.value).info;

  const std::vector<int64_t> ws = graph.value(w).info.shape;
  const int64_t c_out = ws[0], c_per_group = ws[1];
  const int64_t kh = one_d ? 1 : ws[2], kw = ws.back();
  const DType w_dtype = weight_dtype(graph, x, w, "weight");
  const bool w16 = w_dtype == DType::kInt16;
  const QuantizedConstant weight = quantized_constant(graph, w, 0, c_out, "weight", w_dtype);
  for (int64_t zp : weight.zero_points)
    if (zp != 0) not_lowered("weight zero point " + std::to_string(zp) + " (symmetric only)");
  const std::vector<int64_t> stride = conv_spatial(args, "stride", one_d, 1);
  const std::vector<int64_t> padding = conv_spatial(args, "padding", one_d, 0);
  const std::vector<int64_t> dilation = conv_spatial(args, "dilation", one_d, 1);

  // q_conv's scale has the tail's scale already.
  const ChannelRequantization requantization =
      channel_requantization(graph, b, q_in.scales[0], weight.scales, q_conv.scales[0], 1.0, target,
                             w16 ? Accumulator::kInt64W16 : Accumulator::kInt64);

  Tensor packed = repacked_weight(graph, w, w_dtype, {c_out, kh, kw, c_per_group}, 0);
  if (w16) {
    pack_ohwi<int16_t>(weight.data, &packed, c_out, c_per_group, kh, kw);
  } else {
    pack_ohwi<int8_t>(weight.data, &packed, c_out, c_per_group, kh, kw);
  }

  const ValueId v = conv_kernel_input(rw, conv);
  const ValueId w_packed = rw.constant("ohwi", packed);
  ValueId y = rw.call_requantized(
      w16 ? "cortex_m.quantized_conv2d_s16w16.default" : "cortex_m.quantized_conv2d_s16.default",
      {v, w_packed}, {{"stride", stride}, {"padding", padding}, {"dilation", dilation}},
      requantization, int16_output ? q_conv.quant_min : int64_t{-32768},
      int16_output ? q_conv.quant_max : int64_t{32767}, q_conv);
  if (!int16_output) {
    const QuantParams& q = target.q;
    const QuantizedMultiplier m = quantize_multiplier(
        q_conv.scales[0] * target.scale / (q.scales[0] * (1 << kRequantizeS16LeftShift)));
    y = rw.call("cortex_m.requantize_s16.default", {y},
                {{"input_zero_point", int64_t{0}},
                 {"output_zero_point", q.zero_points[0]},
                 {"output_multiplier", int64_t{m.multiplier}},
                 {"output_shift", int64_t{m.shift}},
                 {"output_dtype", DType::kInt8},
                 {"activation_min", target.activation_min},
                 {"activation_max", target.activation_max}});
    rw.set_qparams(y, q);
  }
  commit_conv_output(rw, y, conv, out, target);
}

}  // namespace

CORTEXM_CONVERTER(conv_s16) {
  static const Converter converter{
      {"aten.convolution.default"}, convert_conv_s16, Form::kFolded, [](const Graph& graph, const Node& node) {
        return !is_transposed_conv(node) && graph.value(node.inputs[0]).info.dtype == DType::kInt16;
      }};
  return converter;
}

}  // namespace cortexm::convert
