// ConvertToCortexM, aten.layer_norm.default -> cortex_m.quantized_layer_norm (integer mean and
// variance per row, quantized_layer_norm.h) for a per-tensor int8 input and output; the weight, bias
// and eps constants as layer_norm_constants.h makes them. The input zero point cancels in x - mean.
// A non-contiguous input is made contiguous first.
#include "cortexm/kernels/quantized_layer_norm.h"
#include "ops/norm/layer_norm_constants.h"

namespace cortexm::convert {

namespace {

std::vector<int64_t> identity(int64_t rank) {
  std::vector<int64_t> order(static_cast<size_t>(rank));
  for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int64_t>(k);
  return order;
}

void convert_layer_norm(Graph& graph, NodeId id, const TargetConfig& /*target*/) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const OpArgs args(node.op, node.name, node.attrs);
  const ValueId x = node.inputs[0];
  const QuantParams q_in = int8_per_tensor(graph, x, "input");
  const QuantParams q_out = int8_per_tensor(graph, node.outputs[0], "output");
  const TensorInfo in = graph.value(x).info;
  const TensorInfo out = graph.value(node.outputs[0]).info;
  const std::vector<int64_t>& normalized = args.ints("normalized_shape");
  int64_t n = 1;
  for (int64_t e : normalized) n *= e;
  if (n < 1 || n > kLayerNormMaxRowSize)
    not_lowered("a row of " + std::to_string(n) + " elements (the kernel takes 1 to 65536)");
  const std::vector<double> w = float_constant(graph, node.inputs.size() > 1 ? node.inputs[1] : kNoValue, n,
                                               "weight", "row element");
  const std::vector<double> b = float_constant(graph, node.inputs.size() > 2 ? node.inputs[2] : kNoValue, n,
                                               "bias", "row element");
  const LayerNormConstants c = layer_norm_constants(n, w, b, args.f("eps"), q_in.scales[0], q_out.scales[0]);

  ValueId rows = x;
  if (!in.contiguous()) rows = rw.clone_dim_order(x, identity(in.rank()));
  ValueId weight = kNoValue, bias = kNoValue;
  if (!w.empty()) weight = rw.constant("weight_int16", layer_norm_constant_tensor(DType::kInt16, c.weight, c.weight_scale));
  if (!b.empty()) bias = rw.constant("bias_int32", layer_norm_constant_tensor(DType::kInt32, c.bias, c.unit));
  ValueId y = rw.call("cortex_m.quantized_layer_norm.default", {rows, weight, bias},
                      {{"normalized_rank", static_cast<int64_t>(normalized.size())},
                       {"eps_term", c.eps_term},
                       {"product_shift", c.product_shift},
                       {"output_zero_point", q_out.zero_points[0]},
                       {"output_multiplier", c.multiplier},
                       {"output_shift", c.shift},
                       {"activation_min", q_out.quant_min},
                       {"activation_max", q_out.quant_max}},
                      true);
  rw.set_qparams(y, q_out);
  if (!out.contiguous()) y = rw.clone_dim_order(y, out.effective_dim_order());
  rw.commit(y);
}

}  // namespace

CORTEXM_CONVERTER(layer_norm) {
  static const Converter converter{{"aten.layer_norm.default"}, convert_layer_norm};
  return converter;
}

}  // namespace cortexm::convert
