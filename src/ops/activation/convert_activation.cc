// ConvertToCortexM, elementwise unary ops -> cortex_m.quantized_activation with a 256-entry table:
// entry x + 128 is what the folded node computes for int8 input x (dequantize with the input
// qparams, the float op, quantize with the output qparams as the graph's quantize does), so the
// lowered op is bit-exact with the folded one. relu / hardtanh / clamp / hardsigmoid are not taken
// here: the conv / linear rewrites and ActivationFusion fold them into their producers, and
// ConvertUnfusedClamps gives the ones left a table.
// Symmetric int16 input and output -> cortex_m.quantized_activation_s16: 65536 inputs are too many
// for a table, so TFLite's LUTPopulate<int16_t> samples the node's float op (the folded node's own
// function, run on float32 points) at 513 points in double and the kernel interpolates
// (quantized_activation_s16.h); within a few LSB of the folded node, not bit-exact.
#include <algorithm>
#include <cmath>

#include "cortexm/kernels/quantized_activation.h"
#include "cortexm/kernels/quantized_activation_s16.h"
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

// The node's float op at each point (float32, as the folded node computes it); NaN counts as 0
// (quantize's rule) and infinities as +-1e30, so that LUTPopulate's arithmetic stays finite.
std::vector<double> float_op_at(const Node& node, const std::vector<double>& points) {
  TensorInfo info;
  info.dtype = DType::kFloat32;
  info.shape = {static_cast<int64_t>(points.size())};
  Tensor inputs(info);
  for (size_t i = 0; i < points.size(); ++i) inputs.data<float>()[i] = static_cast<float>(points[i]);
  std::vector<Tensor> outputs = {Tensor(info)};
  run_node(OpRegistry::global().get(node.op),
           KernelContext(node.op, node.name, node.attrs, {&inputs}, outputs));
  std::vector<double> values;
  for (size_t i = 0; i < points.size(); ++i) {
    const double v = outputs[0].data<float>()[i];
    values.push_back(std::isnan(v) ? 0.0 : std::clamp(v, -1e30, 1e30));
  }
  return values;
}

// TFLite's LUTPopulate<int16_t> (kernels/internal/common.h) in double for zero points 0: entry i
// is f at input_min + i * step, less half the error of interpolating the segment's midpoint
// (std::round, halves away from zero); the last entry is f at input_max. Entries are clamped to
// the output's quant range (TFLite: int16's), so interpolated outputs stay inside it too.
Tensor int16_table(const Node& node, const QuantParams& q_in, const QuantParams& q_out) {
  const double input_min = q_in.scales[0] * -32768.0, input_max = q_in.scales[0] * 32767.0;
  const double output_min = q_out.scales[0] * -32768.0, output_max = q_out.scales[0] * 32767.0;
  constexpr int kSteps = kActivationS16TableSize - 1;
  const double step = (input_max - input_min) / kSteps;
  const double half_step = step / 2;
  const double output_scaling_inv = 65536.0 / (output_max - output_min);
  // Points: input_min + k * step (k = 0..512), the 512 midpoints, input_max.
  std::vector<double> points;
  for (int k = 0; k <= kSteps; ++k) points.push_back(input_min + k * step);
  for (int i = 0; i < kSteps; ++i) points.push_back(input_min + i * step + half_step);
  points.push_back(input_max);
  const std::vector<double> f = float_op_at(node, points);
  const double lo = static_cast<double>(q_out.quant_min), hi = static_cast<double>(q_out.quant_max);
  TensorInfo info;
  info.dtype = DType::kInt16;
  info.shape = {kActivationS16TableSize};
  Tensor table(info);
  int16_t* lut = table.data<int16_t>();
  for (int i = 0; i < kSteps; ++i) {
    const double val = f[size_t(i)], val_next = f[size_t(i) + 1];
    const double val_midpoint = f[size_t(kSteps + 1 + i)];
    const double sample_val = std::round(val * output_scaling_inv);
    const double midpoint_interp_val =
        std::round((val_next * output_scaling_inv + std::round(val * output_scaling_inv)) / 2);
    const double midpoint_val = std::round(val_midpoint * output_scaling_inv);
    const double bias = std::round((midpoint_interp_val - midpoint_val) / 2);
    lut[i] = static_cast<int16_t>(std::clamp(sample_val - bias, lo, hi));
  }
  lut[kSteps] = static_cast<int16_t>(std::clamp(std::round(f.back() * output_scaling_inv), lo, hi));
  return table;
}

void convert_activation_s16(Graph& graph, NodeId id) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const ValueId x = node.inputs[0];
  const QuantParams q_in = int16_per_tensor(graph, x, "input");
  const QuantParams q_out = int16_per_tensor(graph, node.outputs[0], "output");
  const ValueId y = rw.call("cortex_m.quantized_activation_s16.default",
                            {x, rw.constant("table", int16_table(node, q_in, q_out))}, {}, true);
  rw.set_qparams(y, q_out);
  rw.commit(y);
}

}  // namespace

namespace {

// sqrt is the magnitude rewrite's (convert_magnitude.cc), which falls back to the table.
constexpr const char* kSqrt = "aten.sqrt.default";

const std::vector<std::string>& table_ops() {
  static const std::vector<std::string> ops = {
      "aten.sigmoid.default", "aten.tanh.default", "aten.silu.default",
      "aten.gelu.default",    "aten.hardswish.default",
      kSqrt,                  "aten.abs.default",  "aten.pow.Tensor_Scalar",
      "aten.add.Scalar",      "aten.sub.Scalar",   "aten.mul.Scalar",
      "aten.div.Scalar",      "aten.leaky_relu.default", "aten.elu.default",
      "aten.exp.default",     "aten.log.default",  "aten.rsqrt.default",
      "aten.neg.default",     "aten.reciprocal.default", "aten.softplus.default",
      "aten.mish.default"};
  return ops;
}

}  // namespace

bool is_table_activation(const std::string& op) {
  return std::find(table_ops().begin(), table_ops().end(), op) != table_ops().end();
}

void convert_activation(Graph& graph, NodeId id, const TargetConfig&) {
  if (graph.value(graph.node(id).inputs[0]).info.dtype == DType::kInt16)
    return convert_activation_s16(graph, id);
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

CORTEXM_CONVERTER(activation) {
  static const Converter converter = [] {
    Converter c{{}, convert_activation};
    for (const std::string& op : table_ops())
      if (op != kSqrt) c.ops.push_back(op);
    return c;
  }();
  return converter;
}

}  // namespace cortexm::convert
