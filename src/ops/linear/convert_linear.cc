// ConvertToCortexM, matrix products: aten.linear.default (weight [N, K]) and aten.addmm.default
// (bias, x, mat2 [K, N] that is a constant or permute_copy [1, 0] of one) ->
// cortex_m.quantized_linear with [N, K] weights, per-channel multipliers and an int32 bias; a
// float output read only by a clamp activation is lowered with it (output_target). With a
// symmetric int16 input and output (16x8) -> cortex_m.quantized_linear_s16 with symmetric int8
// weights, an int64 bias and one multiplier per tensor or per channel; with symmetric int16
// weights (16x16) -> cortex_m.quantized_linear_s16w16, the same otherwise. int16 weights on an
// int8 input are not lowered.
#include <cmath>

#include "cortexm/kernels/requantize.h"
#include "passes/convert_to_cortex_m.h"

namespace cortexm::convert {

namespace {

template <class T>
void transpose_into(const Tensor& src_tensor, int64_t k, int64_t n, Tensor* t) {
  const T* src = src_tensor.data<T>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j) t->data<T>()[i * k + j] = src[j * n + i];
}

// The [N, K] weight data (int8 or int16) behind addmm's mat2 [K, N]: a constant transposed here,
// or the [N, K] constant that a permute_copy with dims [1, 0] transposes.
Tensor addmm_weight_data(const Graph& graph, ValueId mat2) {
  const Value& m = graph.value(mat2);
  const int64_t k = m.info.shape[0], n = m.info.shape[1];
  if (m.kind == ValueKind::kConstant) {
    TensorInfo info = m.info;
    info.shape = {n, k};
    info.qparams.reset();
    Tensor t(info);
    if (m.info.dtype == DType::kInt16) {
      transpose_into<int16_t>(m.data, k, n, &t);
    } else {
      transpose_into<int8_t>(m.data, k, n, &t);
    }
    return t;
  }
  const NodeId p = graph.producer(mat2);
  if (p != kNoNode && graph.node(p).op == "aten.permute_copy.default") {
    const Node& permute = graph.node(p);
    std::vector<int64_t> dims = OpArgs(permute.op, permute.name, permute.attrs).ints("dims");
    for (int64_t& d : dims) d = d < 0 ? d + 2 : d;
    const Value& src = graph.value(permute.inputs[0]);
    if (dims == std::vector<int64_t>{1, 0} && src.kind == ValueKind::kConstant &&
        (src.info.dtype == DType::kInt8 || src.info.dtype == DType::kInt16))
      return src.data;
  }
  not_lowered("mat2 '" + m.name + "' is neither a constant nor permute_copy([1, 0]) of one");
}

// The operands of a linear or addmm node: x, the weight value w, the [N, K] int8 (16x16: int16)
// weight data with its per-channel qparams, and the bias value b (kNoValue when absent).
struct LinearOperands {
  ValueId x = kNoValue, w = kNoValue, b = kNoValue;
  Tensor weights;
  QuantizedConstant channels;
  int64_t n = 0;
  bool int16_weights = false;
};

LinearOperands linear_operands(const Graph& graph, const Node& node) {
  LinearOperands o;
  if (node.op == "aten.addmm.default") {
    const OpArgs args(node.op, node.name, node.attrs);
    if (args.f("alpha") != 1.0) not_lowered("addmm alpha != 1");
    if (args.f("beta") != 1.0 && args.f("beta") != 0.0) not_lowered("addmm beta not 0 or 1");
    o.x = node.inputs[1];
    o.w = node.inputs[2];
    o.n = graph.value(o.w).info.shape[1];
    const DType w_dtype = weight_dtype(graph, o.x, o.w, "mat2");
    o.int16_weights = w_dtype == DType::kInt16;
    o.channels = quantized_channels(graph, o.w, 1, o.n, "mat2", w_dtype);
    o.weights = addmm_weight_data(graph, o.w);
    if (args.f("beta") == 1.0) {
      o.b = node.inputs[0];
      const std::vector<int64_t>& s = graph.value(o.b).info.shape;
      if (s != std::vector<int64_t>{o.n} && s != std::vector<int64_t>{1, o.n})
        not_lowered("addmm self " + shape_to_string(s) + " is not a bias of [" +
                    std::to_string(o.n) + "]");
    }
  } else {
    o.x = node.inputs[0];
    o.w = node.inputs[1];
    o.b = node.inputs.size() > 2 ? node.inputs[2] : kNoValue;
    o.n = graph.value(o.w).info.shape[0];
    const DType w_dtype = weight_dtype(graph, o.x, o.w, "weight");
    o.int16_weights = w_dtype == DType::kInt16;
    o.channels = quantized_constant(graph, o.w, 0, o.n, "weight", w_dtype);
    o.weights = o.channels.data;
  }
  return o;
}

// The [N, K] weight constant with the weight value's qparams (per-channel along axis 0).
Tensor packed_weights(const Graph& graph, const LinearOperands& o) {
  TensorInfo w_info = o.weights.info();
  w_info.qparams = graph.value(o.w).info.qparams;
  if (w_info.qparams->per_channel()) w_info.qparams->axis = 0;
  Tensor packed = o.weights.clone();
  packed.mutable_info() = w_info;
  return packed;
}

// The 16x8 form: symmetric int16 input and output (or a clamp activation's), symmetric int8
// weights, int64 bias; the 16x16 form the same with symmetric int16 weights.
void convert_linear_s16(Rewrite& rw, const LinearOperands& o) {
  Graph& graph = rw.graph();
  const Node& node = rw.old();
  const QuantParams q_in = int16_per_tensor(graph, o.x, "input");
  const OutputTarget target = output_target(graph, node, DType::kInt16);
  const QuantParams& q_out = target.q;
  for (int64_t zp : o.channels.zero_points)
    if (zp != 0) not_lowered("weight zero point " + std::to_string(zp) + " (symmetric only)");

  // One multiplier for per-tensor weights, one per channel otherwise.
  const bool per_channel = graph.value(o.w).info.qparams->per_channel();
  const ChannelRequantization requantization = channel_requantization(
      graph, o.b, q_in.scales[0], o.channels.scales, q_out.scales[0], target.scale, target,
      o.int16_weights ? Accumulator::kInt64W16 : Accumulator::kInt64, !per_channel);

  const ValueId w_packed = rw.constant("weights", packed_weights(graph, o));
  const ValueId y = rw.call_requantized(o.int16_weights ? "cortex_m.quantized_linear_s16w16.default"
                                                        : "cortex_m.quantized_linear_s16.default",
                                        {o.x, w_packed}, {}, requantization, target);
  rw.commit(y, &target);
}

void convert_linear(Graph& graph, NodeId id, const TargetConfig&) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const LinearOperands o = linear_operands(graph, node);
  if (graph.value(o.x).info.dtype == DType::kInt16) return convert_linear_s16(rw, o);
  const ValueId x = o.x, w = o.w, b = o.b;
  const QuantizedConstant& channels = o.channels;
  const int64_t n = o.n;
  const QuantParams q_in = int8_per_tensor(graph, x, "input");
  const OutputTarget target = output_target(graph, node);
  const QuantParams& q_out = target.q;
  // One filter offset for every channel (symmetric weights: 0).
  const int64_t w_zp = channels.zero_points[0];
  for (int64_t zp : channels.zero_points)
    if (zp != w_zp) not_lowered("weight zero points differ between channels");

  // One multiplier for per-tensor weights (every channel's is that one), one per channel otherwise.
  const bool per_channel = graph.value(w).info.qparams->per_channel();
  const ChannelRequantization requantization =
      channel_requantization(graph, b, q_in.scales[0], channels.scales, q_out.scales[0], target.scale, target,
                             Accumulator::kInt32, !per_channel);

  const ValueId w_packed = rw.constant("weights", packed_weights(graph, o));
  const ValueId y = rw.call_requantized("cortex_m.quantized_linear.default", {x, w_packed},
                                        {{"input_offset", -q_in.zero_points[0]},
                                         {"filter_offset", -w_zp},
                                         {"output_offset", q_out.zero_points[0]}},
                                        requantization, target);
  rw.commit(y, &target);
}

}  // namespace

CORTEXM_CONVERTER(linear) {
  static const Converter converter{{"aten.linear.default", "aten.addmm.default"}, convert_linear};
  return converter;
}

}  // namespace cortexm::convert
