// ConvertToCortexM, elementwise unary ops -> cortex_m.quantized_activation with a 256-entry table:
// entry x + 128 is what the folded node computes for int8 input x (dequantize with the input
// qparams, the float op, quantize with the output qparams as the graph's quantize does), so the
// lowered op is bit-exact with the folded one. relu / hardtanh / clamp / hardsigmoid are not taken
// here: the conv / linear rewrites and ActivationFusion fold them into their producers, and
// ConvertUnfusedClamps gives the ones left a table.
#include <algorithm>

#include "cortexm/kernels/quantized_activation.h"
#include "graph/quantized_form.h"
#include "passes/convert_to_cortex_m.h"

namespace cortexm::convert {

namespace {

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
      "aten.sigmoid.default", "aten.tanh.default", "aten.silu.default",
      "aten.gelu.default",    "aten.hardswish.default",
      "aten.sqrt.default",    "aten.abs.default",  "aten.pow.Tensor_Scalar",
      "aten.add.Scalar",      "aten.sub.Scalar",   "aten.mul.Scalar",
      "aten.div.Scalar"};
  return std::find_if(std::begin(kOps), std::end(kOps),
                      [&](const char* o) { return op == o; }) != std::end(kOps);
}

void convert_activation(Graph& graph, NodeId id, const TargetConfig&) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const ValueId x = node.inputs[0];
  const QuantParams q_in = int8_per_tensor(graph, x, "input");
  const QuantParams q_out = int8_per_tensor(graph, node.outputs[0], "output");

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
