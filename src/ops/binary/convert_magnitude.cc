// ConvertToCortexM, complex magnitude: sqrt(a * a + b * b) with a and b symmetric int16 values of
// one scale and the squares and their sum left float (the quantizer's fuse_magnitude) ->
// cortex_m.quantized_magnitude_s16 to the sqrt's int16 or int8 output; the float mul, mul, add go.
// Any other sqrt is an elementwise table (convert_activation.cc).
#include "cortexm/kernels/quantized_magnitude_s16.h"
#include "passes/convert_to_cortex_m.h"

namespace cortexm::convert {

namespace {

// The node producing v if it is `op` and v is read by `reader` alone, else kNoNode.
NodeId sole_producer(const Graph& graph, ValueId v, const std::string& op, NodeId reader) {
  const NodeId p = graph.producer(v);
  if (p == kNoNode || graph.node(p).op != op || graph.is_graph_output(v)) return kNoNode;
  const std::vector<NodeId> readers = graph.users(v);
  if (readers.size() != 1 || readers[0] != reader) return kNoNode;
  if (graph.value(v).info.dtype != DType::kFloat32 || graph.value(v).info.qparams) return kNoNode;
  return p;
}

// x of mul(x, x), or kNoValue.
ValueId squared(const Graph& graph, NodeId mul) {
  if (mul == kNoNode) return kNoValue;
  const Node& n = graph.node(mul);
  return n.inputs.size() == 2 && n.inputs[0] == n.inputs[1] ? n.inputs[0] : kNoValue;
}

void convert_sqrt(Graph& graph, NodeId id, const TargetConfig& target) {
  const Node& node = graph.node(id);
  const NodeId add = sole_producer(graph, node.inputs[0], "aten.add.Tensor", id);
  if (add == kNoNode || graph.node(add).inputs.size() != 2 ||
      OpArgs(graph.node(add).op, graph.node(add).name, graph.node(add).attrs).f("alpha") != 1.0)
    return convert_activation(graph, id, target);
  const Node& sum = graph.node(add);
  const NodeId mul_a = sole_producer(graph, sum.inputs[0], "aten.mul.Tensor", add);
  const NodeId mul_b = sole_producer(graph, sum.inputs[1], "aten.mul.Tensor", add);
  const ValueId a = squared(graph, mul_a), b = squared(graph, mul_b);
  if (a == kNoValue || b == kNoValue || mul_a == mul_b) return convert_activation(graph, id, target);

  Rewrite rw(graph, id);
  const QuantParams q_a = int16_per_tensor(graph, a, "real part");
  const QuantParams q_b = int16_per_tensor(graph, b, "imaginary part");
  if (q_a.scales[0] != q_b.scales[0])
    not_lowered("the real and imaginary parts have different scales");
  if (graph.value(a).info.shape != graph.value(b).info.shape ||
      graph.value(a).info.effective_dim_order() != graph.value(b).info.effective_dim_order())
    not_lowered("the real and imaginary parts differ in shape or dim order");
  const ValueId out = node.outputs[0];
  const DType dtype = graph.value(out).info.dtype;
  const QuantParams q_out = dtype == DType::kInt16 ? int16_per_tensor(graph, out, "output")
                                                   : int8_per_tensor(graph, out, "output");
  const double real_scale = q_a.scales[0] / (q_out.scales[0] * (1 << kMagnitudeFractionBits));
  std::vector<int64_t> multiplier, shift;
  requantize_attrs({real_scale}, &multiplier, &shift);
  const ValueId y = rw.call("cortex_m.quantized_magnitude_s16.default", {a, b},
                            {{"output_multiplier", multiplier[0]},
                             {"output_shift", shift[0]},
                             {"output_zero_point", q_out.zero_points[0]},
                             {"output_dtype", dtype},
                             {"activation_min", q_out.quant_min},
                             {"activation_max", q_out.quant_max}},
                            true);
  rw.set_qparams(y, q_out);
  rw.commit(y);
  graph.erase_node(add);
  graph.erase_node(mul_a);
  graph.erase_node(mul_b);
}

}  // namespace

CORTEXM_CONVERTER(sqrt) {
  static const Converter converter{{"aten.sqrt.default"}, convert_sqrt};
  return converter;
}

}  // namespace cortexm::convert
