// ConvertToCortexM, aten.maximum.default / aten.minimum.default -> cortex_m.quantized_maximum /
// quantized_minimum with quantized_add's rescaling: each input to twice the larger input scale
// after a left shift of 20, the winner requantized to the output (see minmax_params.h). The
// kernels broadcast.
#include <algorithm>

#include "cortexm/kernels/minmax_params.h"
#include "passes/convert_to_cortex_m.h"

namespace cortexm::convert {

namespace {

void convert_minmax(Graph& graph, NodeId id, const TargetConfig& target) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const ValueId a = node.inputs[0], b = node.inputs[1];
  const QuantParams qa = int8_per_tensor(graph, a, "self");
  const QuantParams qb = int8_per_tensor(graph, b, "other");
  const QuantParams qo = int8_per_tensor(graph, node.outputs[0], "output");
  const double sa = qa.scales[0], sb = qb.scales[0], so = qo.scales[0];
  const double twice_max = 2.0 * std::max(sa, sb);
  std::vector<int64_t> m, s;
  requantize_attrs({sa / twice_max, sb / twice_max,
                    twice_max / (static_cast<double>(1 << kMinMaxLeftShift) * so)},
                   &m, &s);
  const bool is_max = node.op == "aten.maximum.default";
  const ValueId y = rw.call(
      is_max ? "cortex_m.quantized_maximum.default" : "cortex_m.quantized_minimum.default", {a, b},
      {{"self_zero_point", qa.zero_points[0]}, {"self_multiplier", m[0]}, {"self_shift", s[0]},
       {"other_zero_point", qb.zero_points[0]}, {"other_multiplier", m[1]}, {"other_shift", s[1]},
       {"output_zero_point", qo.zero_points[0]}, {"output_multiplier", m[2]},
       {"output_shift", s[2]}, {"activation_min", qo.quant_min},
       {"activation_max", qo.quant_max}},
      true);
  rw.set_qparams(y, qo);
  rw.commit(y);
}

}  // namespace

CORTEXM_CONVERTER(minmax) {
  static const Converter converter{{"aten.maximum.default", "aten.minimum.default"}, convert_minmax};
  return converter;
}

}  // namespace cortexm::convert
