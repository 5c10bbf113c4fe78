#include "program/quantized_io.h"

#include <string>
#include <vector>

#include "graph/errors.h"
#include "ops/quant/quant_op_names.h"

namespace cortexm::program {

namespace {

bool is_int8_per_tensor(const TensorInfo& info) {
  return info.dtype == DType::kInt8 && info.qparams && !info.qparams->per_channel() &&
         info.qparams->scales.size() == 1;
}

std::string described(const Graph& graph, ValueId id) {
  const Value& v = graph.value(id);
  return "'" + v.name + "' (" + dtype_name(v.info.dtype) + ")";
}

void quantize_input(Graph& graph, size_t index) {
  const ValueId input = graph.inputs()[index];
  if (is_int8_per_tensor(graph.value(input).info)) return;
  const std::string what = "io='int8': input " + std::to_string(index) + " " + described(graph, input);
  const std::vector<NodeId> users = graph.users(input);
  if (users.empty()) throw GraphError(what + " is read by no op: nothing quantizes it to int8; use io='float'");
  if (graph.is_graph_output(input)) throw GraphError(what + " is also a graph output; use io='float', or return a copy made by an op");
  const ValueId first = graph.node(users[0]).outputs[0];
  const TensorInfo quantized = graph.value(first).info;
  for (NodeId user : users) {
    const Node& node = graph.node(user);
    if (node.op != kCortexMQuantize)
      throw GraphError(what + " is read by '" + node.name + "' (" + node.op + "), not only by " + kCortexMQuantize +
                       ": use io='float', or quantize the graph so every op reading the input is quantized "
                       "(cortexm.check lists the float ops)");
    const TensorInfo& info = graph.value(node.outputs[0]).info;
    if (!is_int8_per_tensor(info))
      throw GraphError(what + " is quantized by '" + node.name + "' to " + dtype_name(info.dtype) +
                       ", not to int8 with one scale: use io='float' (int8 I/O needs an int8 input: "
                       "precision='int8')");
    if (info != quantized)
      throw GraphError(what + " is quantized by '" + node.name + "' at other qparams than by '" +
                       graph.node(users[0]).name + "': use io='float'");
  }
  for (NodeId user : users) {
    const ValueId out = graph.node(user).outputs[0];
    graph.replace_all_uses(out, input);
    graph.erase_node(user);
  }
  graph.mutable_value(input).info = quantized;
}

// The int8 tensor output `index` becomes.
ValueId dequantized_output(const Graph& graph, size_t index) {
  const ValueId output = graph.outputs()[index];
  if (is_int8_per_tensor(graph.value(output).info)) return output;
  const std::string what = "io='int8': output " + std::to_string(index) + " " + described(graph, output);
  const NodeId producer = graph.producer(output);
  if (producer == kNoNode)
    throw GraphError(what + " is not computed by an op (a graph input or constant): use io='float'");
  const Node& node = graph.node(producer);
  if (node.op != kCortexMDequantize)
    throw GraphError(what + " is made by '" + node.name + "' (" + node.op + "), not by " + kCortexMDequantize +
                     ": use io='float', or quantize the graph so the op making the output is quantized "
                     "(cortexm.check lists the float ops)");
  const ValueId quantized = node.inputs[0];
  if (!is_int8_per_tensor(graph.value(quantized).info))
    throw GraphError(what + " is dequantized from " + described(graph, quantized) +
                     ", not from int8 with one scale: use io='float' (int8 I/O needs an int8 output: "
                     "precision='int8')");
  return quantized;
}

}  // namespace

void make_io_int8(Graph& graph) {
  for (size_t i = 0; i < graph.inputs().size(); ++i) quantize_input(graph, i);
  std::vector<ValueId> outputs;
  std::vector<NodeId> dequantizes;
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    outputs.push_back(dequantized_output(graph, i));
    if (outputs.back() != graph.outputs()[i]) dequantizes.push_back(graph.producer(graph.outputs()[i]));
  }
  graph.set_outputs(outputs);
  for (NodeId node : dequantizes) {
    if (!graph.node(node).alive) continue;  // an output listed twice
    const ValueId out = graph.node(node).outputs[0];
    if (graph.users(out).empty() && !graph.is_graph_output(out)) graph.erase_node(node);
  }
}

}  // namespace cortexm::program
