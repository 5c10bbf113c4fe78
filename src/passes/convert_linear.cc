// ConvertToCortexM, matrix products: aten.linear.default (weight [N, K]) and aten.addmm.default
// (bias, x, mat2 [K, N] that is a constant or permute_copy [1, 0] of one) ->
// cortex_m.quantized_linear with [N, K] weights, per-channel multipliers and an int32 bias; a
// float output read only by a clamp activation is lowered with it (output_target).
#include "cortexm/kernels/quantized_linear.h"
#include "passes/convert_to_cortex_m.h"

namespace cortexm::convert {

namespace {

// The [N, K] weight data behind addmm's mat2 [K, N]: a constant transposed here, or the [N, K]
// constant that a permute_copy with dims [1, 0] transposes.
Tensor addmm_weight_data(const Graph& graph, ValueId mat2) {
  const Value& m = graph.value(mat2);
  const int64_t k = m.info.shape[0], n = m.info.shape[1];
  if (m.kind == ValueKind::kConstant) {
    TensorInfo info = m.info;
    info.shape = {n, k};
    info.qparams.reset();
    Tensor t(info);
    const int8_t* src = m.data.data<int8_t>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < k; ++j) t.data<int8_t>()[i * k + j] = src[j * n + i];
    return t;
  }
  const NodeId p = graph.producer(mat2);
  if (p != kNoNode && graph.node(p).op == "aten.permute_copy.default") {
    const Node& permute = graph.node(p);
    std::vector<int64_t> dims = OpArgs(permute.op, permute.name, permute.attrs).ints("dims");
    for (int64_t& d : dims) d = d < 0 ? d + 2 : d;
    const Value& src = graph.value(permute.inputs[0]);
    if (dims == std::vector<int64_t>{1, 0} && src.kind == ValueKind::kConstant &&
        src.info.dtype == DType::kInt8)
      return src.data;
  }
  not_lowered("mat2 '" + m.name + "' is neither a constant nor permute_copy([1, 0]) of one");
}

}  // namespace

void convert_linear(Graph& graph, NodeId id, const TargetConfig& target_config) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const bool addmm = node.op == "aten.addmm.default";
  ValueId x = node.inputs[0], w = kNoValue, b = kNoValue;
  Tensor weights;
  QuantizedConstant channels;
  int64_t n = 0;
  if (addmm) {
    const OpArgs args(node.op, node.name, node.attrs);
    if (args.f("alpha") != 1.0) not_lowered("addmm alpha != 1");
    if (args.f("beta") != 1.0 && args.f("beta") != 0.0) not_lowered("addmm beta not 0 or 1");
    x = node.inputs[1];
    w = node.inputs[2];
    n = graph.value(w).info.shape[1];
    channels = int8_channels(graph, w, 1, n, "mat2");
    weights = addmm_weight_data(graph, w);
    if (args.f("beta") == 1.0) {
      b = node.inputs[0];
      const std::vector<int64_t>& s = graph.value(b).info.shape;
      if (s != std::vector<int64_t>{n} && s != std::vector<int64_t>{1, n})
        not_lowered("addmm self " + shape_to_string(s) + " is not a bias of [" +
                    std::to_string(n) + "]");
    }
  } else {
    w = node.inputs[1];
    b = node.inputs.size() > 2 ? node.inputs[2] : kNoValue;
    n = graph.value(w).info.shape[0];
    channels = int8_constant(graph, w, 0, n, "weight");
    weights = channels.data;
  }
  const QuantParams q_in = int8_per_tensor(graph, x, "input");
  const OutputTarget target = output_target(graph, node);
  const QuantParams& q_out = target.q;
  // One filter offset for every channel (symmetric weights: 0).
  const int64_t w_zp = channels.zero_points[0];
  for (int64_t zp : channels.zero_points)
    if (zp != w_zp) not_lowered("weight zero points differ between channels");

  std::vector<double> bias_scales, real_scales;
  for (int64_t c = 0; c < n; ++c) {
    bias_scales.push_back(q_in.scales[0] * channels.scales[c]);
    real_scales.push_back(bias_scales.back() * target.scale / q_out.scales[0]);
  }
  std::vector<int64_t> multipliers, shifts;
  requantize_attrs(real_scales, &multipliers, &shifts);
  std::vector<int32_t> bias = int32_bias(graph, b, bias_scales);
  add_tail_offset(target, bias_scales, &bias);

  TensorInfo w_info = weights.info();
  w_info.qparams = graph.value(w).info.qparams;
  if (w_info.qparams->per_channel()) w_info.qparams->axis = 0;
  Tensor packed = weights.clone();
  packed.mutable_info() = w_info;

  LinearParams params;
  params.input_features = static_cast<int32_t>(weights.info().shape[1]);
  params.output_features = static_cast<int32_t>(n);
  const int64_t scratch = scratch_bytes(quantized_linear_scratch_size(params, target_config.isa));

  const ValueId w_packed = rw.constant("weights", packed);
  const ValueId b_packed = rw.constant("bias", bias_tensor(bias, bias_scales));
  const ValueId y = rw.call("cortex_m.quantized_linear.default", {x, w_packed, b_packed},
                            {{"input_offset", -q_in.zero_points[0]},
                             {"filter_offset", -w_zp},
                             {"output_offset", q_out.zero_points[0]},
                             {"requantize_multipliers", multipliers},
                             {"requantize_shifts", shifts},
                             {"activation_min", target.activation_min},
                             {"activation_max", target.activation_max},
                             {"scratch_bytes", scratch}},
                            true);
  rw.set_qparams(y, q_out);
  rw.commit(y, &target);
}

}  // namespace cortexm::convert
