#include "graph/interpreter.h"

#include <map>

#include "graph/errors.h"
#include "graph/quantized_form.h"

namespace cortexm {

std::vector<Tensor> run_graph(const Graph& graph, const std::vector<Tensor>& inputs,
                              const NodeObserver& observer) {
  const auto& graph_inputs = graph.inputs();
  if (inputs.size() != graph_inputs.size())
    throw GraphError("graph takes " + std::to_string(graph_inputs.size()) + " inputs, got " +
                     std::to_string(inputs.size()));
  std::vector<Tensor> env(graph.num_values());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = graph.value(graph_inputs[i]);
    if (inputs[i].dtype() != v.info.dtype || inputs[i].shape() != v.info.shape)
      throw GraphError("input " + std::to_string(i) + " ('" + v.name + "') is " +
                       info_to_string(inputs[i].info()) + ", the graph expects " +
                       dtype_name(v.info.dtype) + shape_to_string(v.info.shape));
    env[v.id] = inputs[i];
    env[v.id].mutable_info() = v.info;
  }
  for (ValueId c : graph.constants()) env[c] = graph.value(c).data;
  // One variant for every node: set_host_kernels from another thread changes the next run.
  const HostVariant variant = host_variant();

  // Last reader of each value, so intermediates are freed as soon as they are dead.
  std::map<ValueId, size_t> last_use;
  const auto& order = graph.order();
  for (size_t step = 0; step < order.size(); ++step)
    for (ValueId in : graph.node(order[step]).inputs)
      if (in != kNoValue) last_use[in] = step;

  for (size_t step = 0; step < order.size(); ++step) {
    const Node& node = graph.node(order[step]);
    const OpSchema& schema = OpRegistry::global().get(node.op);
    if (!schema.kernel)
      throw UnsupportedError("node '" + node.name + "' (" + node.op + ") has no reference kernel");
    std::vector<const Tensor*> ins;
    for (ValueId in : node.inputs) ins.push_back(in == kNoValue ? nullptr : &env[in]);
    std::vector<Tensor> outs;
    for (ValueId out : node.outputs) outs.emplace_back(graph.value(out).info);
    KernelContext ctx(node.op, node.name, node.attrs, ins, outs);
    ctx.host_variant = variant;
    run_node(schema, ctx);
    for (size_t k = 0; k < outs.size(); ++k) {
      const TensorInfo& info = graph.value(node.outputs[k]).info;
      if (outs[k].dtype() != info.dtype || outs[k].numel() != info.numel())
        throw GraphError("node '" + node.name + "' (" + node.op + ") kernel produced " +
                         info_to_string(outs[k].info()) + " for " + info_to_string(info));
      outs[k].mutable_info() = info;
    }
    if (observer) observer(node, outs);
    for (size_t k = 0; k < outs.size(); ++k) env[node.outputs[k]] = std::move(outs[k]);
    for (ValueId in : node.inputs) {
      if (in == kNoValue || graph.value(in).kind != ValueKind::kNodeOutput) continue;
      if (last_use[in] == step && !graph.is_graph_output(in)) env[in] = Tensor();
    }
  }
  std::vector<Tensor> results;
  for (ValueId out : graph.outputs()) results.push_back(env[out]);
  return results;
}

}  // namespace cortexm
