// ReplaceQuantNodes: the quantized_decomposed quantize_per_tensor / dequantize_per_tensor left
// at the boundaries become their cortex_m twins (same attributes, same arithmetic) when the
// kernels take their dtype (int8, int16). A dequantize no cortex_m op can do (per-channel, int32)
// becomes a float constant computed at compile time when it reads a constant, else it stays.
#include "passes/qparams_util.h"

namespace cortexm {

bool replace_quant_nodes(Graph& graph, const TargetConfig&) {
  return rewrite_nodes(graph, [&](NodeId id) {
    const Node& node = graph.node(id);
    const bool quantize = node.op == kQuantize;
    if (!quantize && !is_decomposed_dequantize(node.op)) return false;
    const ValueId in = node.inputs[0];
    const DType dtype = node_dtype(node);
    const bool per_tensor = node.op != kDequantizePerChannel;
    if (per_tensor && (dtype == DType::kInt8 || dtype == DType::kInt16)) {
      graph.mutable_node(id).op = quantize ? kCortexMQuantize : kCortexMDequantize;
      graph.reinfer(id);
      return true;
    }
    if (quantize || graph.value(in).kind != ValueKind::kConstant) return false;
    const QuantParams q = node_qparams(graph, node);
    const ValueId out = node.outputs[0];
    const std::string name = graph.value(out).name;
    const ValueId real =
        dequantized_constant(graph, in, q, graph.value(out).info.dim_order, name + "_float");
    graph.replace_all_uses(out, real);
    graph.erase_node(id);
    graph.rename_value(real, name);  // graph outputs keep their names
    return true;
  });
}

}  // namespace cortexm
