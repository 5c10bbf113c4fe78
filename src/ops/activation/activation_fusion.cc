// ActivationFusion: a folded relu / hardtanh / clamp (int8, or int16 after an int16 op, in and
// out, same qparams) reading a cortex_m op with an activation range, directly or through
// view_copy / squeeze / unsqueeze / _clone_dim_order nodes (which commute with an elementwise
// clamp), each output read once, becomes the intersection of that range with its bounds quantized
// as the folded node quantizes them; the node goes.
// hardsigmoid is a rescale, not a clamp: ConvertToCortexM lowers it with a float-output conv.
#include <cmath>

#include "cortexm/kernels/quantize_per_tensor.h"
#include "graph/quantized_form.h"
#include "passes/convert_to_cortex_m.h"

namespace cortexm {

namespace {

const OpSchema* schema_of(const std::string& op) { return OpRegistry::global().find(op); }

bool read_once(const Graph& graph, ValueId v) {
  return graph.users(v).size() == 1 && !graph.is_graph_output(v);
}

int64_t int_attr(const Node& node, const std::string& name) {
  return OpArgs(node.op, node.name, node.attrs).i(name);
}

// Fuses activation node `id` into its producer; returns "" on success, else why not.
std::string fuse(Graph& graph, NodeId id) {
  const Node act = graph.node(id);
  convert::ClampActivation a;
  convert::clamp_activation(act, &a);
  if (std::isnan(a.lo) || std::isnan(a.hi)) return "a NaN bound";
  const TensorInfo& in = graph.value(act.inputs[0]).info;
  const TensorInfo& out = graph.value(act.outputs[0]).info;
  const DType dtype = out.dtype;
  if ((dtype != DType::kInt8 && dtype != DType::kInt16) || in.dtype != dtype || !in.qparams ||
      !out.qparams || in.qparams->per_channel() || *in.qparams != *out.qparams)
    return "input and output are not both int8 or both int16 with the same per-tensor qparams";
  const QuantParams q = *out.qparams;
  if (!quantize_per_tensor_prepare(quantize_params_of(q, dtype)).ok())
    return "its qparams are not valid quantization qparams";
  // Walk back through single-reader views and clones to the producer.
  ValueId v = act.inputs[0];
  NodeId producer = kNoNode;
  while (true) {
    if (!read_once(graph, v)) return "its input '" + graph.value(v).name + "' has other readers";
    producer = graph.producer(v);
    if (producer == kNoNode) return "its input is not computed by a cortex_m op";
    const OpSchema* schema = schema_of(graph.node(producer).op);
    if (!schema || !schema->keeps_element_order) break;
    v = graph.node(producer).inputs[0];
  }
  const Node& p = graph.node(producer);
  const OpSchema* producer_schema = schema_of(p.op);
  if (!producer_schema || !producer_schema->fuses_activation)
    return "its producer " + p.op + " has no activation range";
  const TensorInfo& p_out = graph.value(p.outputs[0]).info;
  if (p_out.dtype != dtype || !p_out.qparams || *p_out.qparams != q)
    return "its producer's output has another dtype or other qparams";
  const int64_t new_min =
      std::max<int64_t>(int_attr(p, "activation_min"), quantize_scalar(a.lo, q, dtype));
  const int64_t new_max =
      std::min<int64_t>(int_attr(p, "activation_max"), quantize_scalar(a.hi, q, dtype));
  if (new_min > new_max) return "its range does not meet the producer's";
  graph.set_attr(producer, "activation_min", new_min);
  graph.set_attr(producer, "activation_max", new_max);
  Node& fused = graph.mutable_node(producer);
  fused.meta["fused_activation"] =
      (fused.meta.count("fused_activation") ? fused.meta["fused_activation"] + ", " : "") + act.op;
  // The producer's integers are now the activation's (views and clones between keep the values).
  if (!float_value_of(act).empty()) fused.meta[kFloatValueMeta] = float_value_of(act);
  graph.replace_all_uses(act.outputs[0], act.inputs[0]);
  graph.erase_node(id);
  return "";
}

}  // namespace

bool activation_fusion(Graph& graph, const TargetConfig&) {
  return rewrite_nodes(graph, [&](NodeId id) {
    const Node& node = graph.node(id);
    convert::ClampActivation a;
    // A pure clamp: hardsigmoid rescales (it is lowered with a float-output conv instead).
    if (!convert::clamp_activation(node, &a) || a.scale != 1.0 || a.offset != 0.0 ||
        !is_quantized(graph.value(node.inputs[0]).info))
      return false;
    const std::string why_not = fuse(graph, id);
    if (!why_not.empty()) graph.mutable_node(id).meta["lowering"] = "float: not fused: " + why_not;
    return why_not.empty();
  });
}

}  // namespace cortexm
