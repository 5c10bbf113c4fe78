// ConvertUnfusedClamps: a folded relu / hardtanh / clamp / hardsigmoid that ActivationFusion could
// not fold into a producer (its input has other readers, or its producer has no activation range,
// as silero's relu after the LSTM's h) becomes cortex_m.quantized_activation with the 256-entry
// table of convert_activation.cc: bit-exact with the folded node, and no float round trip.
// Runs after ActivationFusion, so every clamp that can fold into a producer has done so.
#include "graph/quantized_form.h"
#include "passes/convert_to_cortex_m.h"
#include "passes/qparams_util.h"

namespace cortexm {

namespace {

bool int8_per_tensor_value(const Graph& graph, ValueId v) {
  const TensorInfo& info = graph.value(v).info;
  return info.dtype == DType::kInt8 && info.qparams && !info.qparams->per_channel();
}

}  // namespace

bool convert_unfused_clamps(Graph& graph, const TargetConfig& target) {
  bool changed = false;
  const std::vector<NodeId> order = graph.order();
  for (NodeId id : order) {
    if (!is_live(graph, id)) continue;
    const Node& node = graph.node(id);
    convert::ClampActivation a;
    if (!convert::clamp_activation(node, &a) || node.inputs.empty() || node.outputs.size() != 1 ||
        !int8_per_tensor_value(graph, node.inputs[0]) ||
        !int8_per_tensor_value(graph, node.outputs[0]))
      continue;
    try {
      convert::convert_activation(graph, id, target);
      changed = true;
    } catch (const convert::NotLowered& e) {
      graph.mutable_node(id).meta["lowering"] = "float: " + e.reason;
    }
  }
  return changed;
}

}  // namespace cortexm
