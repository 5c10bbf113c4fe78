// ConvertToCortexM, int8 -> int8 rescaling outside the folded form: a quantize_per_tensor of a
// dequantize_per_tensor (the quantizer's requantized cat inputs, DQ(q_in) -> Q(q_out)) becomes
// cortex_m.requantize (multiplier s_in / (2^20 s_out)); and a cat whose inputs are dequantized at
// qparams other than the ones of the quantize nodes reading it (so FoldAndAnnotateQParams left it
// float) becomes an int8 cat of inputs requantized to the output's qparams where they differ.
#include <cmath>

#include "cortexm/kernels/requantize_tensor.h"
#include "passes/convert_to_cortex_m.h"
#include "passes/qparams_util.h"

namespace cortexm::convert {

namespace {

// The int8 value a per-tensor int8 dequantize reads, with the qparams it dequantizes by.
struct Dequantized {
  ValueId value = kNoValue;
  QuantParams q;
};

Dequantized dequantized(const Graph& graph, ValueId v, const std::string& what) {
  const NodeId p = v == kNoValue ? kNoNode : graph.producer(v);
  if (p == kNoNode || graph.node(p).op != kDequantize)
    not_lowered(what + " is not a dequantize_per_tensor output");
  const Node& dq = graph.node(p);
  Dequantized d{dq.inputs[0], node_qparams(graph, dq)};
  if (node_dtype(dq) != DType::kInt8 || graph.value(d.value).info.dtype != DType::kInt8)
    not_lowered(what + " is not dequantized from int8");
  if (!(std::isfinite(d.q.scales[0]) && d.q.scales[0] > 0.0) || d.q.zero_points[0] < -128 ||
      d.q.zero_points[0] > 127)
    not_lowered(what + " has a scale or zero point outside int8's");
  return d;
}

QuantParams quantize_qparams(const Graph& graph, const Node& q) {
  if (q.op != kQuantize || node_dtype(q) != DType::kInt8)
    not_lowered("'" + q.name + "' is not an int8 quantize_per_tensor");
  return int8_per_tensor(graph, q.outputs[0], "quantize output");
}

ValueId requantized(Rewrite& rw, const Dequantized& in, const QuantParams& out) {
  std::vector<int64_t> m, s;
  requantize_attrs({in.q.scales[0] / (out.scales[0] * (1 << kRequantizeLeftShift))}, &m, &s);
  const ValueId y = rw.call("cortex_m.requantize.default", {in.value},
                            {{"input_zero_point", in.q.zero_points[0]},
                             {"output_zero_point", out.zero_points[0]},
                             {"output_multiplier", m[0]},
                             {"output_shift", s[0]},
                             {"activation_min", out.quant_min},
                             {"activation_max", out.quant_max}},
                            true);
  rw.set_qparams(y, out);
  return y;
}

}  // namespace

void convert_requantize(Graph& graph, NodeId id, const TargetConfig& target) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const QuantParams q_out = quantize_qparams(graph, node);
  const Dequantized in = dequantized(graph, node.inputs[0], "input");
  rw.commit(requantized(rw, in, q_out));
}

void convert_cat(Graph& graph, NodeId id, const TargetConfig& target) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const ValueId out = node.outputs[0];
  const std::vector<NodeId> readers = graph.users(out);
  if (readers.empty() || graph.is_graph_output(out))
    not_lowered("its float output is a graph output or unused");
  const QuantParams q_out = quantize_qparams(graph, graph.node(readers[0]));
  for (NodeId r : readers)
    if (graph.node(r).attrs != graph.node(readers[0]).attrs)
      not_lowered("its readers are not quantizes with one set of qparams");
  std::vector<ValueId> inputs;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Dequantized in = dequantized(graph, node.inputs[i], "input " + std::to_string(i));
    // Integers pass unchanged when the qparams agree and no value can be outside the range
    // the quantize would clamp to (node outputs were clamped by their producer).
    const bool full_range = q_out.quant_min <= -128 && q_out.quant_max >= 127;
    const bool same = in.q == q_out && (full_range || graph.value(in.value).kind ==
                                                          ValueKind::kNodeOutput);
    inputs.push_back(same ? in.value : requantized(rw, in, q_out));
  }
  const ValueId y = rw.call(node.op, inputs, node.attrs);
  rw.set_qparams(y, q_out);
  // The quantize nodes go: their readers read the int8 cat.
  for (NodeId r : readers) {
    graph.replace_all_uses(graph.node(r).outputs[0], y);
    graph.erase_node(r);
  }
  TensorInfo& old_info = graph.mutable_value(out).info;
  old_info.dtype = DType::kInt8;
  old_info.qparams = q_out;
  rw.commit(y);
}

}  // namespace cortexm::convert
