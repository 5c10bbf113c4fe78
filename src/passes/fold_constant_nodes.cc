// FoldConstantNodes: a quantize or a data movement op whose inputs are all constants runs once,
// here, through its interpreter kernel (which the runtime's matches bit for bit), and its output
// becomes a constant: an unrolled LSTM's zero initial state is stored as the int8 values its first
// step reads, not as float32 quantized on every run. Folds that would add constant bytes (an
// expand, a cat of copies) are left to run.
#include "graph/quantized_form.h"
#include "passes/pass.h"

namespace cortexm {

bool fold_constant_nodes(Graph& graph, const TargetConfig&) {
  return rewrite_nodes(graph, [&](NodeId id) {
    const Node& node = graph.node(id);
    const OpSchema& schema = OpRegistry::global().get(node.op);
    if (!schema.folds_constant_inputs && !schema.is_data_movement) return false;
    if (node.outputs.size() != 1 || node.inputs.empty() || graph.is_graph_output(node.outputs[0])) return false;
    std::vector<const Tensor*> inputs;
    size_t input_bytes = 0;
    for (ValueId v : node.inputs) {
      if (v == kNoValue) continue;
      const Value& value = graph.value(v);
      if (value.kind != ValueKind::kConstant) break;
      inputs.push_back(&value.data);
      input_bytes += value.data.nbytes();
    }
    const Value& out = graph.value(node.outputs[0]);
    if (inputs.size() != node.inputs.size() || out.info.nbytes() > input_bytes) return false;
    std::vector<Tensor> outputs = {Tensor(out.info)};
    run_node(schema, KernelContext(node.op, node.name, node.attrs, inputs, outputs));
    const std::string name = out.name;
    const ValueId folded = graph.add_constant(name + "_folded", std::move(outputs[0]));
    graph.replace_all_uses(node.outputs[0], folded);
    graph.erase_node(id);
    return true;
  });
}

}  // namespace cortexm
