// ConvertToCortexM, int8 -> int8 rescaling outside the folded form: a quantize_per_tensor of a
// dequantize_per_tensor (the quantizer's requantized cat inputs, DQ(q_in) -> Q(q_out)) becomes
// cortex_m.requantize (multiplier s_in / (2^20 s_out)); and a cat whose inputs are dequantized at
// qparams other than the ones of the quantize nodes reading it (so FoldAndAnnotateQParams left it
// float) becomes an int8 cat of inputs requantized to the output's qparams where they differ.
// A quantize of a dequantize with int16 on either side (symmetric int16, zero point 0; e.g. the
// int16 -> int16 rescaling in front of silero's cat) becomes cortex_m.requantize_s16.
#include <cmath>

#include "cortexm/kernels/requantize_s16.h"
#include "cortexm/kernels/requantize_tensor.h"
#include "passes/convert_to_cortex_m.h"
#include "passes/qparams_util.h"

namespace cortexm::convert {

namespace {

// The int8 (or, when allowed, symmetric int16) value a per-tensor dequantize reads, with the
// qparams it dequantizes by.
struct Dequantized {
  ValueId value = kNoValue;
  QuantParams q;
  DType dtype = DType::kInt8;
};

Dequantized dequantized(const Graph& graph, ValueId v, const std::string& what,
                        bool allow_int16 = false) {
  const NodeId p = v == kNoValue ? kNoNode : graph.producer(v);
  if (p == kNoNode || graph.node(p).op != kDequantize)
    not_lowered(what + " is not a dequantize_per_tensor output");
  const Node& dq = graph.node(p);
  Dequantized d{dq.inputs[0], node_qparams(graph, dq), node_dtype(dq)};
  const bool int16 = allow_int16 && d.dtype == DType::kInt16;
  if ((d.dtype != DType::kInt8 && !int16) || graph.value(d.value).info.dtype != d.dtype)
    not_lowered(what + (allow_int16 ? " is not dequantized from int8 or int16"
                                    : " is not dequantized from int8"));
  const int64_t zp_lo = int16 ? 0 : -128, zp_hi = int16 ? 0 : 127;
  if (!(std::isfinite(d.q.scales[0]) && d.q.scales[0] > 0.0) || d.q.zero_points[0] < zp_lo ||
      d.q.zero_points[0] > zp_hi)
    not_lowered(what + (int16 ? " has a scale or zero point outside symmetric int16's"
                              : " has a scale or zero point outside int8's"));
  return d;
}

QuantParams quantize_qparams(const Graph& graph, const Node& q, bool allow_int16 = false) {
  if (allow_int16 && q.op == kQuantize && node_dtype(q) == DType::kInt16)
    return int16_per_tensor(graph, q.outputs[0], "quantize output");
  if (q.op != kQuantize || node_dtype(q) != DType::kInt8)
    not_lowered("'" + q.name + (allow_int16 ? "' is not an int8 or int16 quantize_per_tensor"
                                            : "' is not an int8 quantize_per_tensor"));
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

// requantize_s16: int16 input shifted left by 15 (int8 by 20) before the multiplier.
ValueId requantized_s16(Rewrite& rw, const Dequantized& in, const QuantParams& out,
                        DType out_dtype) {
  const bool int16_input = in.dtype == DType::kInt16;
  const int left = int16_input ? kRequantizeS16LeftShift : kRequantizeLeftShift;
  std::vector<int64_t> m, s;
  requantize_attrs({in.q.scales[0] / (out.scales[0] * double(int64_t{1} << left))}, &m, &s);
  const ValueId y = rw.call("cortex_m.requantize_s16.default", {in.value},
                            {{"input_zero_point", in.q.zero_points[0]},
                             {"output_zero_point", out.zero_points[0]},
                             {"output_multiplier", m[0]},
                             {"output_shift", s[0]},
                             {"output_dtype", out_dtype},
                             {"activation_min", out.quant_min},
                             {"activation_max", out.quant_max}},
                            true);
  rw.set_qparams(y, out);
  return y;
}

void convert_requantize(Graph& graph, NodeId id, const TargetConfig& target) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const QuantParams q_out = quantize_qparams(graph, node, true);
  const Dequantized in = dequantized(graph, node.inputs[0], "input", true);
  const DType out_dtype = node_dtype(node);
  if (in.dtype == DType::kInt8 && out_dtype == DType::kInt8)
    rw.commit(requantized(rw, in, q_out));
  else
    rw.commit(requantized_s16(rw, in, q_out, out_dtype));
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
  const std::string float_value = graph.value(out).name;  // its quantizes did not fold
  rw.commit(y);
  note_float_value(graph, y, float_value);  // y is cat's own output
}

bool reads_dequantize(const Graph& graph, const Node& node) {
  for (ValueId v : node.inputs) {
    const NodeId p = v == kNoValue ? kNoNode : graph.producer(v);
    if (p != kNoNode &&
        graph.node(p).op == "quantized_decomposed.dequantize_per_tensor.default")
      return true;
  }
  return false;
}

}  // namespace

// Outside the folded form: a quantize or a cat reading a dequantize.
CORTEXM_CONVERTER(requantize) {
  static const Converter converter{{"quantized_decomposed.quantize_per_tensor.default"},
                                   convert_requantize, Form::kAny, reads_dequantize};
  return converter;
}

CORTEXM_CONVERTER(cat) {
  static const Converter converter{{"aten.cat.default"}, convert_cat, Form::kAny, reads_dequantize};
  return converter;
}

}  // namespace cortexm::convert
