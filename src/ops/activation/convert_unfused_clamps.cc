// ConvertUnfusedClamps: a folded relu / hardtanh / clamp / hardsigmoid that ActivationFusion could
// not fold into a producer (its input has other readers, or its producer has no activation range,
// as silero's relu after the LSTM's h) becomes cortex_m.quantized_activation with the 256-entry
// table of convert_activation.cc: bit-exact with the folded node, and no float round trip.
// With symmetric int16 input and output, relu / hardtanh / clamp become cortex_m.requantize_s16 to
// the output's scale with the quantized bounds as its range (max(x, 0) itself when the scales
// agree: the 513-entry table's samples sit up to half an input LSB off its segment starts, which
// puts every positive relu output one LSB low); hardsigmoid (and an empty clamp) takes the int16
// table (cortex_m.quantized_activation_s16).
// Runs after ActivationFusion, so every clamp that can fold into a producer has done so.
#include <algorithm>
#include <cmath>

#include "cortexm/kernels/quantize_per_tensor.h"
#include "cortexm/kernels/requantize_s16.h"
#include "graph/quantized_form.h"
#include "passes/convert_to_cortex_m.h"
#include "passes/qparams_util.h"

namespace cortexm {

namespace {

// v quantized to int16 as the folded node's output is (float32 math; infinities saturate).
int64_t quantize_bound_s16(float v, const QuantParams& q) {
  QuantizeParams p;
  p.scale = static_cast<float>(q.scales[0]);
  p.zero_point = 0;
  p.quant_min = static_cast<int32_t>(q.quant_min);
  p.quant_max = static_cast<int32_t>(q.quant_max);
  p.dtype = QuantDtype::kInt16;
  int16_t out = 0;
  quantize_per_tensor(p, &v, &out, 1);
  return out;
}

void convert_clamp_s16(Graph& graph, NodeId id, const convert::ClampActivation& a,
                       const TargetConfig& target) {
  const Node& node = graph.node(id);
  const QuantParams q_in = convert::int16_per_tensor(graph, node.inputs[0], "input");
  const QuantParams q_out = convert::int16_per_tensor(graph, node.outputs[0], "output");
  if (std::isnan(a.lo) || std::isnan(a.hi)) convert::not_lowered("its clamp has a NaN bound");
  const int64_t lo = std::max<int64_t>(q_out.quant_min, quantize_bound_s16(a.lo, q_out));
  const int64_t hi = std::min<int64_t>(q_out.quant_max, quantize_bound_s16(a.hi, q_out));
  if (a.scale != 1.0 || a.offset != 0.0 || lo > hi)
    return convert::convert_activation(graph, id, target);
  convert::Rewrite rw(graph, id);
  std::vector<int64_t> m, s;
  convert::requantize_attrs(
      {q_in.scales[0] / (q_out.scales[0] * double(int64_t{1} << kRequantizeS16LeftShift))}, &m, &s);
  const ValueId y = rw.call("cortex_m.requantize_s16.default", {node.inputs[0]},
                            {{"input_zero_point", int64_t{0}},
                             {"output_zero_point", int64_t{0}},
                             {"output_multiplier", m[0]},
                             {"output_shift", s[0]},
                             {"output_dtype", DType::kInt16},
                             {"activation_min", lo},
                             {"activation_max", hi}},
                            true);
  rw.set_qparams(y, q_out);
  rw.commit(y);
}

// Per-tensor int8 or int16 (the dtype of v).
bool per_tensor_value(const Graph& graph, ValueId v, DType dtype) {
  const TensorInfo& info = graph.value(v).info;
  return info.dtype == dtype && info.qparams && !info.qparams->per_channel();
}

}  // namespace

bool convert_unfused_clamps(Graph& graph, const TargetConfig& target) {
  return rewrite_nodes(graph, [&](NodeId id) {
    if (!is_live(graph, id)) return false;
    const Node& node = graph.node(id);
    convert::ClampActivation a;
    if (!convert::clamp_activation(node, &a) || node.inputs.empty() || node.outputs.size() != 1)
      return false;
    const DType dtype = graph.value(node.inputs[0]).info.dtype;
    if ((dtype != DType::kInt8 && dtype != DType::kInt16) ||
        !per_tensor_value(graph, node.inputs[0], dtype) ||
        !per_tensor_value(graph, node.outputs[0], dtype))
      return false;
    try {
      if (dtype == DType::kInt16)
        convert_clamp_s16(graph, id, a, target);
      else
        convert::convert_activation(graph, id, target);
      return true;
    } catch (const convert::NotLowered& e) {
      graph.mutable_node(id).meta["lowering"] = "float: " + e.reason;
      return false;
    }
  });
}

}  // namespace cortexm
