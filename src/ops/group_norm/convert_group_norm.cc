// ConvertToCortexM, aten.group_norm.default and aten.instance_norm.default (one group per channel)
// -> cortex_m.quantized_group_norm for a per-tensor int8 input and output, or
// cortex_m.quantized_group_norm_s16 for symmetric int16 ones (16x8): the layer-norm arithmetic per
// (batch, group) set of n = C / num_groups * spatial values, with the weight, bias and eps
// constants as the layer-norm lowering makes them (ops/norm/layer_norm_constants.h; int16's
// product_shift 4 more for its 4 more fraction bits), one weight and bias per channel. The kernel
// runs on contiguous or channels-last bytes: a channels-last input stays so, and so does the input
// of a clone that only makes a channels-last value (a lowered conv's output) contiguous for this
// node; any other layout is made contiguous first. The output comes in the input's layout and is cloned
// to the node's when that differs. A float output read by one relu / hardtanh / clamp /
// hardsigmoid alone (the quantizer's group_norm + activation pattern) is lowered with it
// (output_target): its scale and offset fold into the float weight and bias, its bounds into the
// activation range.
#include "cortexm/kernels/quantized_layer_norm.h"
#include "graph/layout.h"
#include "ops/group_norm/runtime/group_norm_kernels.h"
#include "ops/norm/layer_norm_constants.h"

namespace cortexm::convert {

namespace {

bool is_channels_last(const TensorInfo& info) {
  return info.rank() == 4 && info.effective_dim_order() == channels_last_dim_order(4);
}

// The value the kernel reads for x: x when contiguous or channels-last; the channels-last input of
// the clone making x contiguous when this node alone reads x; else a contiguous clone of x.
ValueId kernel_input(Rewrite& rw, ValueId x) {
  Graph& graph = rw.graph();
  const TensorInfo& in = graph.value(x).info;
  if (is_channels_last(in)) return x;
  if (!in.contiguous()) return rw.clone_dim_order(x, contiguous_dim_order(in.shape.size()));
  const NodeId p = graph.producer(x);
  if (p == kNoNode || graph.node(p).op != kClone || graph.is_graph_output(x) || graph.users(x).size() != 1)
    return x;
  const ValueId source = graph.node(p).inputs[0];
  const TensorInfo& src = graph.value(source).info;
  if (!is_channels_last(src) || src.dtype != in.dtype || src.qparams != in.qparams) return x;
  return source;
}

void convert_group_norm(Graph& graph, NodeId id, const TargetConfig& /*target*/) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const OpArgs args(node.op, node.name, node.attrs);
  const bool instance = node.op == "aten.instance_norm.default";
  const ValueId x = node.inputs[0];
  const bool s16 = graph.value(x).info.dtype == DType::kInt16;
  const DType dtype = s16 ? DType::kInt16 : DType::kInt8;
  const QuantParams q_in = s16 ? int16_per_tensor(graph, x, "input") : int8_per_tensor(graph, x, "input");
  const OutputTarget target = output_target(graph, node, dtype);
  const QuantParams& q_out = target.q;
  const TensorInfo in = graph.value(x).info;
  const TensorInfo out = graph.value(target.value).info;
  int64_t spatial = 1;
  for (size_t d = 2; d < in.shape.size(); ++d) spatial *= in.shape[d];
  const int64_t channels = in.shape[1], groups = instance ? channels : args.i("num_groups");
  const int64_t n = channels / groups * spatial;
  const int64_t max_n = s16 ? kGroupNormS16MaxGroupSize : kGroupNormMaxGroupSize;
  if (n > max_n)
    not_lowered(instance ? "a channel of " + std::to_string(n) + " values (the " + std::string(s16 ? "int16" : "int8") +
                               " kernel takes up to " + std::to_string(max_n) + "): use a smaller input"
                         : "a group of " + std::to_string(n) + " values (C / num_groups * spatial; the " +
                               std::string(s16 ? "int16" : "int8") + " kernel takes up to " + std::to_string(max_n) +
                               "): use more groups or a smaller input");
  std::vector<double> w = float_constant(graph, node.inputs.size() > 1 ? node.inputs[1] : kNoValue, channels,
                                         "weight", "channel");
  std::vector<double> b = float_constant(graph, node.inputs.size() > 2 ? node.inputs[2] : kNoValue, channels,
                                         "bias", "channel");
  // int16 without a weight: z * 1 >> product_shift would drop z's 4 more fraction bits; a weight of
  // ones (int16 32767) keeps them.
  if (s16 && w.empty()) w.assign(static_cast<size_t>(channels), 1.0);
  if (target.scale != 1.0 || target.offset != 0.0) {  // scale * (z * w + b) + offset
    w.resize(static_cast<size_t>(channels), 1.0);
    b.resize(static_cast<size_t>(channels), 0.0);
    for (size_t k = 0; k < w.size(); ++k) {
      w[k] *= target.scale;
      b[k] = b[k] * target.scale + target.offset;
    }
  }
  LayerNormConstants c = layer_norm_constants(n, w, b, args.f("eps"), q_in.scales[0], q_out.scales[0]);
  if (s16) {
    c.product_shift += kGroupNormS16FractionBits - kLayerNormFractionBits;  // the same unit
    if (c.product_shift > 31) not_lowered("its bias does not fit int32 beside the normalized values");
  }

  const ValueId source = kernel_input(rw, x);
  ValueId weight = kNoValue, bias = kNoValue;
  if (!w.empty()) weight = rw.constant("weight_int16", layer_norm_constant_tensor(DType::kInt16, c.weight, c.weight_scale));
  if (!b.empty()) bias = rw.constant("bias_int32", layer_norm_constant_tensor(DType::kInt32, c.bias, c.unit));
  ValueId y = rw.call(s16 ? "cortex_m.quantized_group_norm_s16.default" : "cortex_m.quantized_group_norm.default",
                      {source, weight, bias},
                      {{"num_groups", groups},
                       {"eps_term", c.eps_term},
                       {"product_shift", c.product_shift},
                       {"output_zero_point", q_out.zero_points[0]},
                       {"output_multiplier", c.multiplier},
                       {"output_shift", c.shift},
                       {"activation_min", target.activation_min},
                       {"activation_max", target.activation_max}},
                      true);
  rw.set_qparams(y, q_out);
  if (graph.value(y).info.effective_dim_order() != out.effective_dim_order())
    y = rw.clone_dim_order(y, out.effective_dim_order());
  rw.commit(y, &target);
}

}  // namespace

CORTEXM_CONVERTER(group_norm) {
  static const Converter converter{{"aten.group_norm.default", "aten.instance_norm.default"}, convert_group_norm};
  return converter;
}

}  // namespace cortexm::convert
