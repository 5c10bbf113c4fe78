// ConvertToCortexM, elementwise unary ops -> cortex_m.quantized_activation with a 256-entry table:
// entry x + 128 is what the folded node computes for int8 input x (dequantize with the input
// qparams, the float op, quantize with the output qparams as the graph's quantize does), so the
// lowered op is bit-exact with the folded one. relu / hardtanh / clamp with equal input and output
// qparams after a cortex_m op with an activation range are left to ActivationFusion.
#include <algorithm>

#include "cortexm/kernels/quantized_activation.h"
#include "graph/quantized_form.h"
#include "passes/convert_to_cortex_m.h"

namespace cortexm::convert {

namespace {

bool is_clamp(const std::string& op) {
  return op == "aten.relu.default" || op == "aten.hardtanh.default" || op == "aten.clamp.default";
}

// ActivationFusion's case: the producer (through single-reader views and clones) is a cortex_m op
// with an activation range.
bool fusable(const Graph& graph, ValueId v) {
  while (true) {
    if (graph.users(v).size() != 1 || graph.is_graph_output(v)) return false;
    const NodeId producer = graph.producer(v);
    if (producer == kNoNode) return false;
    const std::string& op = graph.node(producer).op;
    if (op == "aten.view_copy.default" || op == kClone) {
      v = graph.node(producer).inputs[0];
      continue;
    }
    return op == "cortex_m.quantized_conv2d.default" ||
           op == "cortex_m.quantized_depthwise_conv2d.default" ||
           op == "cortex_m.quantized_linear.default" || op == "cortex_m.quantized_add.default" ||
           op == "cortex_m.quantized_mul.default" || op == "cortex_m.quantized_max_pool2d.default" ||
           op == "cortex_m.quantized_avg_pool2d.default";
  }
}

Tensor int8_tensor(std::vector<int64_t> shape, std::optional<QuantParams> q) {
  TensorInfo info;
  info.dtype = DType::kInt8;
  info.shape = std::move(shape);
  info.qparams = std::move(q);
  return Tensor(info);
}

}  // namespace

bool is_table_activation(const std::string& op) {
  static const char* const kOps[] = {
      "aten.sigmoid.default", "aten.tanh.default",     "aten.silu.default",
      "aten.gelu.default",    "aten.hardswish.default", "aten.hardsigmoid.default",
      "aten.sqrt.default",    "aten.abs.default",       "aten.pow.Tensor_Scalar",
      "aten.relu.default",    "aten.hardtanh.default",  "aten.clamp.default",
      "aten.add.Scalar",      "aten.sub.Scalar",        "aten.mul.Scalar",
      "aten.div.Scalar"};
  return std::find_if(std::begin(kOps), std::end(kOps),
                      [&](const char* o) { return op == o; }) != std::end(kOps);
}

void convert_activation(Graph& graph, NodeId id) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const ValueId x = node.inputs[0];
  const QuantParams q_in = int8_per_tensor(graph, x, "input");
  const QuantParams q_out = int8_per_tensor(graph, node.outputs[0], "output");
  if (is_clamp(node.op) && q_in == q_out && fusable(graph, x))
    not_lowered("left to ActivationFusion (same qparams after a cortex_m op)");

  // Every int8 input through the folded node's own arithmetic.
  Tensor inputs = int8_tensor({kActivationTableSize}, q_in);
  for (int32_t i = 0; i < kActivationTableSize; ++i)
    inputs.data<int8_t>()[i] = static_cast<int8_t>(i - 128);
  std::vector<Tensor> outputs = {int8_tensor({kActivationTableSize}, q_out)};
  const OpSchema& schema = OpRegistry::global().get(node.op);
  run_node(schema, KernelContext(node.op, node.name, node.attrs, {&inputs}, outputs));
  Tensor table = int8_tensor({kActivationTableSize}, std::nullopt);
  std::copy(outputs[0].data<int8_t>(), outputs[0].data<int8_t>() + kActivationTableSize,
            table.data<int8_t>());

  const ValueId y = rw.call("cortex_m.quantized_activation.default",
                            {x, rw.constant("table", table)}, {}, true);
  rw.set_qparams(y, q_out);
  rw.commit(y);
}

}  // namespace cortexm::convert
