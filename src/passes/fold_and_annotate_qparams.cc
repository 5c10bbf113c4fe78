// FoldAndAnnotateQParams: quantized_decomposed dequantize nodes feeding an aten compute or
// data-movement node fold into it (the node reads the quantized value), and the
// quantize_per_tensor nodes reading its output fold into it (its output becomes that quantized
// value); see docs/lowering.md, step 1. Compute nodes then run in the folded form
// (quantized_form.h), exactly DQ -> op -> Q. Data-movement nodes work on the integers, so they
// fold only when input and output qparams agree. relu / hardtanh / clamp pass their output
// qparams back to their producer. Repeated until nothing changes.
#include <cmath>
#include <optional>
#include <set>

#include "cortexm/kernels/quantize_per_tensor.h"
#include "passes/convert_to_cortex_m.h"
#include "passes/qparams_util.h"
#include "passes/rewrite_util.h"

namespace cortexm {

namespace {

bool is_candidate(const Node& node) {
  if (node.op.rfind("cortex_m.", 0) == 0 || node.op.rfind("quantized_decomposed.", 0) == 0)
    return false;
  const OpSchema& schema = OpRegistry::global().get(node.op);
  return takes_folded_form(schema) || schema.is_data_movement;
}

// Gives a value the qparams q when it has none (a constant's data too); true when it ends up
// with exactly q.
bool adopt_qparams(Graph& graph, ValueId id, const QuantParams& q) {
  Value& v = graph.mutable_value(id);
  if (!is_integer(v.info.dtype)) return false;
  if (v.info.qparams && *v.info.qparams != q) return false;
  if (v.kind == ValueKind::kConstant) {
    const auto& data_q = v.data.info().qparams;
    if (data_q && *data_q != q) return false;
    v.data.mutable_info().qparams = q;
  }
  v.info.qparams = q;
  return true;
}

// A dequantize input that can fold: its node, the quantized value and the qparams.
struct FoldableInput {
  NodeId dequantize = kNoNode;
  ValueId quantized = kNoValue;
  QuantParams qparams;
  DType dtype = DType::kInt8;
};

std::optional<FoldableInput> foldable_input(const Graph& graph, ValueId v) {
  if (v == kNoValue) return std::nullopt;
  const NodeId p = graph.producer(v);
  if (p == kNoNode || !is_decomposed_dequantize(graph.node(p).op)) return std::nullopt;
  const Node& dq = graph.node(p);
  FoldableInput f;
  f.dequantize = p;
  f.quantized = dq.inputs[0];
  f.qparams = node_qparams(graph, dq);
  f.dtype = node_dtype(dq);
  const Value& q = graph.value(f.quantized);
  if (!is_integer(q.info.dtype)) return std::nullopt;
  if (q.info.qparams && *q.info.qparams != f.qparams) return std::nullopt;
  const auto& data_q = q.data.info().qparams;
  if (q.kind == ValueKind::kConstant && data_q && *data_q != f.qparams) return std::nullopt;
  return f;
}

// The quantize nodes reading `out` when they all have the same attributes, none is a graph
// output and `out` is not one either; empty otherwise.
std::vector<NodeId> foldable_quantizes(const Graph& graph, ValueId out) {
  if (graph.is_graph_output(out)) return {};
  const std::vector<NodeId> readers = graph.users(out);
  for (NodeId r : readers) {
    const Node& q = graph.node(r);
    if (q.op != kQuantize || q.attrs != graph.node(readers[0]).attrs) return {};
    if (graph.is_graph_output(q.outputs[0])) return {};  // a graph output Q stays
  }
  return readers;
}

// The quantize nodes go: their readers read `out`, which holds the same integers.
void drop_quantizes(Graph& graph, ValueId out, const std::vector<NodeId>& quantizes) {
  for (NodeId q : quantizes) {
    const ValueId q_out = graph.node(q).outputs[0];
    redirect(graph, q_out, out, graph.users(q_out), true);
    graph.erase_node(q);
  }
}

void erase_if_unused(Graph& graph, const std::set<NodeId>& nodes) {
  for (NodeId id : nodes) {
    if (!is_live(graph, id)) continue;
    const ValueId out = graph.node(id).outputs[0];
    if (graph.users(out).empty() && !graph.is_graph_output(out)) graph.erase_node(id);
  }
}

void annotate(Graph& graph, NodeId id) {
  Node& node = graph.mutable_node(id);
  auto list = [&](const std::vector<ValueId>& values, bool index_single) {
    std::string s;
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i] == kNoValue) continue;
      const TensorInfo& info = graph.value(values[i]).info;
      if (!is_quantized(info)) continue;
      if (!s.empty()) s += "; ";
      if (index_single || values.size() > 1) s += std::to_string(i) + ": ";
      s += qparams_string(info.dtype, *info.qparams);
    }
    return s;
  };
  const std::string in = list(node.inputs, true), out = list(node.outputs, false);
  if (!in.empty()) node.meta["input_qparams"] = in;
  if (!out.empty()) node.meta["output_qparams"] = out;
}

// relu / hardtanh / clamp commute with a monotone quantize: Q(act(x)) == act'(Q(x)) with the
// bounds quantized. So an activation with a quantized output passes its qparams back to the
// compute node producing its input when it is that value's only reader (the quantizer puts no
// Q / DQ between an op and its activation tail): the producer gets a quantized output.
bool pass_qparams_back(Graph& graph, NodeId id) {
  const Node& act = graph.node(id);
  convert::ClampActivation clamp;
  if (!convert::clamp_activation(act, &clamp) || clamp.scale != 1.0 || clamp.offset != 0.0)
    return false;  // a plain clamp: relu / hardtanh / clamp (not hardsigmoid)
  const TensorInfo& out = graph.value(act.outputs[0]).info;
  const ValueId in = act.inputs[0];
  if (!is_quantized(out) || out.qparams->per_channel() || is_quantized(graph.value(in).info))
    return false;
  const NodeId producer = graph.producer(in);
  if (producer == kNoNode || graph.is_graph_output(in)) return false;
  if (!takes_folded_form(OpRegistry::global().get(graph.node(producer).op))) return false;
  if (graph.node(producer).outputs.size() != 1 || graph.users(in) != std::vector<NodeId>{id} ||
      std::count(act.inputs.begin(), act.inputs.end(), in) != 1)
    return false;
  const TensorInfo quantized = out;
  TensorInfo& info = graph.mutable_value(in).info;
  info.dtype = quantized.dtype;
  info.qparams = quantized.qparams;
  graph.reinfer(producer);
  graph.reinfer(id);
  annotate(graph, producer);
  return true;
}

bool fold_compute(Graph& graph, NodeId id) {
  std::set<NodeId> detached;
  const std::vector<ValueId> inputs = graph.node(id).inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::optional<FoldableInput> f = foldable_input(graph, inputs[i]);
    if (!f || !adopt_qparams(graph, f->quantized, f->qparams)) continue;
    graph.replace_input(id, i, f->quantized);
    detached.insert(f->dequantize);
  }
  bool output_folded = false;
  if (graph.node(id).outputs.size() == 1) {
    const ValueId out = graph.node(id).outputs[0];
    const std::vector<NodeId> quantizes = foldable_quantizes(graph, out);
    if (!quantizes.empty() && !is_quantized(graph.value(out).info)) {
      const Node& q = graph.node(quantizes[0]);
      TensorInfo& info = graph.mutable_value(out).info;
      info.dtype = node_dtype(q);
      info.qparams = node_qparams(graph, q);
      drop_quantizes(graph, out, quantizes);
      note_float_value(graph, out, graph.value(out).name);
      output_folded = true;
    }
  }
  if (!detached.empty() || output_folded) {
    graph.reinfer(id);
    erase_if_unused(graph, detached);
  }
  const bool passed_back = pass_qparams_back(graph, id);
  return !detached.empty() || output_folded || passed_back;
}

// Moving integers equals DQ -> op -> Q only for integers inside the quant range (Q clamps).
// Node outputs come from quantizes or clamping ops; graph inputs and constants may not.
bool within_range(const Graph& graph, ValueId v, const QuantParams& q) {
  const Value& value = graph.value(v);
  const bool int8 = value.info.dtype == DType::kInt8;
  if (q.quant_min <= (int8 ? -128 : -32768) && q.quant_max >= (int8 ? 127 : 32767)) return true;
  if (value.kind == ValueKind::kNodeOutput) return true;
  if (value.kind == ValueKind::kInput) return false;
  for (int64_t i = 0; i < value.data.numel(); ++i) {
    const int64_t x = int8 ? value.data.data<int8_t>()[i] : value.data.data<int16_t>()[i];
    if (x < q.quant_min || x > q.quant_max) return false;
  }
  return true;
}

bool fold_data_movement(Graph& graph, NodeId id) {
  const Node& node = graph.node(id);
  // Every input is a per-tensor dequantize with one set of qparams and dtype.
  std::vector<FoldableInput> inputs;
  for (ValueId v : node.inputs) {
    if (v == kNoValue) continue;
    const std::optional<FoldableInput> f = foldable_input(graph, v);
    if (!f || f->qparams.per_channel()) return false;
    if (!inputs.empty() && (f->qparams != inputs[0].qparams || f->dtype != inputs[0].dtype))
      return false;
    inputs.push_back(*f);
  }
  if (inputs.empty()) return false;
  const QuantParams q = inputs[0].qparams;
  const DType dtype = inputs[0].dtype;
  if (dtype != DType::kInt8 && dtype != DType::kInt16) return false;
  for (const FoldableInput& f : inputs)
    if (!within_range(graph, f.quantized, q)) return false;

  const OpSchema& schema = OpRegistry::global().get(node.op);
  Attrs attrs = node.attrs;
  if (schema.quantize_attrs)
    schema.quantize_attrs(attrs, [&](double value) { return quantize_scalar(static_cast<float>(value), q, dtype); });

  // On the integers the node must give integers with the same qparams.
  std::vector<TensorInfo> quantized;
  for (const FoldableInput& f : inputs) {
    quantized.push_back(graph.value(f.quantized).info);
    quantized.back().qparams = q;
  }
  std::vector<const TensorInfo*> infos;
  for (size_t i = 0, k = 0; i < node.inputs.size(); ++i)
    infos.push_back(node.inputs[i] == kNoValue ? nullptr : &quantized[k++]);
  std::vector<TensorInfo> expected;
  try {
    expected = schema.infer(InferContext(node.op, node.name, attrs, infos));
  } catch (const GraphError&) {
    return false;
  }
  if (expected.size() != node.outputs.size()) return false;
  for (const TensorInfo& info : expected)
    if (info.dtype != dtype || !info.qparams || *info.qparams != q) return false;

  // Outputs: all readers are quantizes with the same qparams (several outputs: at least one;
  // the others get a dequantize).
  std::vector<std::vector<NodeId>> quantizes;
  bool any = false;
  for (ValueId out : node.outputs) {
    std::vector<NodeId> qs = foldable_quantizes(graph, out);
    if (!qs.empty() && (node_qparams(graph, graph.node(qs[0])) != q ||
                        node_dtype(graph.node(qs[0])) != dtype))
      qs.clear();
    if (graph.is_graph_output(out)) return false;
    if (qs.empty() && node.outputs.size() == 1) return false;
    any = any || !qs.empty();
    quantizes.push_back(std::move(qs));
  }
  if (!any) return false;

  for (const FoldableInput& f : inputs)
    if (!adopt_qparams(graph, f.quantized, q)) return false;  // foldable_input checked this
  std::set<NodeId> detached;
  const std::vector<ValueId> node_inputs = node.inputs;
  for (size_t i = 0, k = 0; i < node_inputs.size(); ++i) {
    if (node_inputs[i] == kNoValue) continue;
    graph.replace_input(id, i, inputs[k].quantized);
    detached.insert(inputs[k++].dequantize);
  }
  graph.mutable_node(id).attrs = attrs;
  graph.reinfer(id);
  const std::vector<ValueId> outs = graph.node(id).outputs;
  const std::string source = graph.node(id).source;
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!quantizes[k].empty()) {
      drop_quantizes(graph, outs[k], quantizes[k]);
      if (outs.size() == 1) note_float_value(graph, outs[k], graph.value(outs[k]).name);
      continue;
    }
    const std::vector<NodeId> readers = graph.users(outs[k]);
    if (readers.empty()) continue;
    const ValueId dq = graph.call(kDequantize, {outs[k]}, quant_attrs(q, dtype),
                                  node_after(graph, id), "", source)[0];
    redirect(graph, outs[k], dq, readers, false);
  }
  erase_if_unused(graph, detached);
  return true;
}

}  // namespace

bool fold_qparams_into(Graph& graph, NodeId id) {
  if (!is_candidate(graph.node(id))) return false;
  const bool changed = OpRegistry::global().get(graph.node(id).op).is_data_movement
                           ? fold_data_movement(graph, id)
                           : fold_compute(graph, id);
  if (changed) annotate(graph, id);
  return changed;
}

bool fold_and_annotate_qparams(Graph& graph, const TargetConfig&) {
  // Candidates are never erased here, only quantize / dequantize nodes are.
  std::vector<NodeId> candidates;
  for (NodeId id : graph.order())
    if (is_candidate(graph.node(id))) candidates.push_back(id);
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    for (NodeId id : candidates) again = fold_qparams_into(graph, id) || again;
    changed = changed || again;
  }
  return changed;
}

}  // namespace cortexm
