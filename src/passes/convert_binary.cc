// ConvertToCortexM, elementwise binaries: aten.add.Tensor (alpha 1) -> cortex_m.quantized_add with
// TFLite's derivation (inputs shifted left by 20 and rescaled to twice the larger input scale),
// aten.mul.Tensor -> cortex_m.quantized_mul (one multiplier for s_a * s_b / s_out). The kernels
// broadcast.
#include <algorithm>

#include "cortexm/kernels/quantized_add.h"
#include "passes/convert_to_cortex_m.h"

namespace cortexm::convert {

void convert_binary(Graph& graph, NodeId id, const TargetConfig&) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const ValueId a = node.inputs[0], b = node.inputs[1];
  const QuantParams qa = int8_per_tensor(graph, a, "self");
  const QuantParams qb = int8_per_tensor(graph, b, "other");
  const QuantParams qo = int8_per_tensor(graph, node.outputs[0], "output");
  const double sa = qa.scales[0], sb = qb.scales[0], so = qo.scales[0];
  std::vector<int64_t> m, s;
  ValueId y = kNoValue;
  if (node.op == "aten.add.Tensor") {
    if (OpArgs(node.op, node.name, node.attrs).f("alpha") != 1.0) not_lowered("alpha != 1");
    const double twice_max = 2.0 * std::max(sa, sb);
    requantize_attrs({sa / twice_max, sb / twice_max,
                      twice_max / (static_cast<double>(1 << kAddLeftShift) * so)},
                     &m, &s);
    y = rw.call("cortex_m.quantized_add.default", {a, b},
                {{"self_zero_point", qa.zero_points[0]}, {"self_multiplier", m[0]},
                 {"self_shift", s[0]}, {"other_zero_point", qb.zero_points[0]},
                 {"other_multiplier", m[1]}, {"other_shift", s[1]},
                 {"output_zero_point", qo.zero_points[0]}, {"output_multiplier", m[2]},
                 {"output_shift", s[2]}, {"activation_min", qo.quant_min},
                 {"activation_max", qo.quant_max}},
                true);
  } else {
    requantize_attrs({sa * sb / so}, &m, &s);
    y = rw.call("cortex_m.quantized_mul.default", {a, b},
                {{"self_zero_point", qa.zero_points[0]}, {"other_zero_point", qb.zero_points[0]},
                 {"output_zero_point", qo.zero_points[0]}, {"output_multiplier", m[0]},
                 {"output_shift", s[0]}, {"activation_min", qo.quant_min},
                 {"activation_max", qo.quant_max}},
                true);
  }
  rw.set_qparams(y, qo);
  rw.commit(y);
}

}  // namespace cortexm::convert
