#include "program/quantized_io.h"

#include <string>
#include <vector>

#include "graph/errors.h"
#include "ops/quant/quant_op_names.h"

namespace cortexm::program {

namespace {

// io='int8' takes int8 boundaries; io='int16' int16 ones and int8 ones (each the integers the
// graph's boundary quantize / dequantize make and read).
struct IoKind {
  bool int16 = false;
  const char* name() const { return int16 ? "io='int16'" : "io='int8'"; }
  const char* dtypes() const { return int16 ? "int16 or int8" : "int8"; }
  const char* needs() const {
    return int16 ? "integer I/O needs integer tensors at the boundary" : "int8 I/O needs an int8 input: precision='int8'";
  }
};

bool is_integer_per_tensor(const TensorInfo& info, IoKind kind) {
  return (info.dtype == DType::kInt8 || (kind.int16 && info.dtype == DType::kInt16)) && info.qparams &&
         !info.qparams->per_channel() && info.qparams->scales.size() == 1;
}

std::string described(const Graph& graph, ValueId id) {
  const Value& v = graph.value(id);
  return "'" + v.name + "' (" + dtype_name(v.info.dtype) + ")";
}

void quantize_input(Graph& graph, size_t index, IoKind kind) {
  const ValueId input = graph.inputs()[index];
  if (is_integer_per_tensor(graph.value(input).info, kind)) return;
  const std::string what = std::string(kind.name()) + ": input " + std::to_string(index) + " " + described(graph, input);
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
    if (!is_integer_per_tensor(info, kind))
      throw GraphError(what + " is quantized by '" + node.name + "' to " + dtype_name(info.dtype) + ", not to " +
                       kind.dtypes() + " with one scale: use io='float' (" + kind.needs() + ")");
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
ValueId dequantized_output(const Graph& graph, size_t index, IoKind kind) {
  const ValueId output = graph.outputs()[index];
  if (is_integer_per_tensor(graph.value(output).info, kind)) return output;
  const std::string what = std::string(kind.name()) + ": output " + std::to_string(index) + " " + described(graph, output);
  const NodeId producer = graph.producer(output);
  if (producer == kNoNode)
    throw GraphError(what + " is not computed by an op (a graph input or constant): use io='float'");
  const Node& node = graph.node(producer);
  if (node.op != kCortexMDequantize)
    throw GraphError(what + " is made by '" + node.name + "' (" + node.op + "), not by " + kCortexMDequantize +
                     ": use io='float', or quantize the graph so the op making the output is quantized "
                     "(cortexm.check lists the float ops)");
  const ValueId quantized = node.inputs[0];
  if (!is_integer_per_tensor(graph.value(quantized).info, kind))
    throw GraphError(what + " is dequantized from " + described(graph, quantized) + ", not from " + kind.dtypes() +
                     " with one scale: use io='float' (" +
                     (kind.int16 ? std::string(kind.needs()) : std::string("int8 I/O needs an int8 output: precision='int8'")) +
                     ")");
  return quantized;
}

void make_io_integer(Graph& graph, IoKind kind) {
  for (size_t i = 0; i < graph.inputs().size(); ++i) quantize_input(graph, i, kind);
  std::vector<ValueId> outputs;
  std::vector<NodeId> dequantizes;
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    outputs.push_back(dequantized_output(graph, i, kind));
    if (outputs.back() != graph.outputs()[i]) dequantizes.push_back(graph.producer(graph.outputs()[i]));
  }
  graph.set_outputs(outputs);
  for (NodeId node : dequantizes) {
    if (!graph.node(node).alive) continue;  // an output listed twice
    const ValueId out = graph.node(node).outputs[0];
    if (graph.users(out).empty() && !graph.is_graph_output(out)) graph.erase_node(node);
  }
}

}  // namespace

void make_io_int8(Graph& graph) { make_io_integer(graph, IoKind{false}); }

void make_io_int16(Graph& graph) { make_io_integer(graph, IoKind{true}); }

}  // namespace cortexm::program
