// ConvertToCortexM: folded aten ops on int8 values become cortex_m ops (the rewrites live in
// convert_conv.cc, convert_linear.cc, convert_binary.cc and convert_pool.cc). A folded op that
// cannot be lowered stays as it is with meta lowering = "float: <reason>".
#include "passes/convert_to_cortex_m.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "cortexm/kernels/requantize.h"
#include "graph/errors.h"
#include "graph/quantized_form.h"

namespace cortexm {

namespace convert {

namespace {

std::string describe(const Graph& graph, ValueId v) {
  return "'" + graph.value(v).name + "' (" + info_to_string(graph.value(v).info) + ")";
}

bool valid_scale(double s) { return std::isfinite(s) && s > 0.0; }

int64_t raw_integer(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kInt8: return t.data<int8_t>()[i];
    case DType::kInt16: return t.data<int16_t>()[i];
    case DType::kInt32: return t.data<int32_t>()[i];
    default: not_lowered(std::string("cannot read ") + dtype_name(t.dtype()) + " values");
  }
}

}  // namespace

QuantParams int8_per_tensor(const Graph& graph, ValueId v, const std::string& what) {
  if (v == kNoValue) not_lowered(what + " is absent");
  const TensorInfo& info = graph.value(v).info;
  if (info.dtype != DType::kInt8 || !info.qparams)
    not_lowered(what + " " + describe(graph, v) + " is not an int8 quantized value");
  if (info.qparams->per_channel()) not_lowered(what + " " + describe(graph, v) + " is per-channel");
  if (!valid_scale(info.qparams->scales[0]))
    not_lowered(what + " " + describe(graph, v) + " has a scale that is not finite and > 0");
  return *info.qparams;
}

QuantizedConstant int8_constant(const Graph& graph, ValueId v, int64_t axis, int64_t channels,
                                const std::string& what) {
  if (graph.value(v).kind != ValueKind::kConstant)
    not_lowered(what + " " + describe(graph, v) + " is not a constant");
  QuantizedConstant out = int8_channels(graph, v, axis, channels, what);
  out.data = graph.value(v).data;
  return out;
}

QuantizedConstant int8_channels(const Graph& graph, ValueId v, int64_t axis, int64_t channels,
                                const std::string& what) {
  const Value& value = graph.value(v);
  if (value.info.dtype != DType::kInt8 || !value.info.qparams)
    not_lowered(what + " " + describe(graph, v) + " is not int8 quantized");
  const QuantParams& q = *value.info.qparams;
  if (q.per_channel() && (q.axis != axis || static_cast<int64_t>(q.scales.size()) != channels))
    not_lowered(what + " " + describe(graph, v) + " is quantized per channel along axis " +
                std::to_string(q.axis) + ", expected axis " + std::to_string(axis) + " with " +
                std::to_string(channels) + " channels");
  QuantizedConstant out;
  for (int64_t c = 0; c < channels; ++c) {
    const size_t i = q.per_channel() ? static_cast<size_t>(c) : 0;
    if (!valid_scale(q.scales[i]))
      not_lowered(what + " " + describe(graph, v) + " has a scale that is not finite and > 0");
    out.scales.push_back(q.scales[i]);
    out.zero_points.push_back(q.zero_points[i]);
  }
  return out;
}

std::vector<int32_t> int32_bias(const Graph& graph, ValueId bias, const std::vector<double>& scales) {
  const int64_t n = static_cast<int64_t>(scales.size());
  std::vector<int32_t> out(static_cast<size_t>(n), 0);
  if (bias == kNoValue) return out;
  const Value& b = graph.value(bias);
  if (b.kind != ValueKind::kConstant) not_lowered("bias " + describe(graph, bias) + " is not a constant");
  if (b.info.numel() != n)
    not_lowered("bias " + describe(graph, bias) + " does not have " + std::to_string(n) + " elements");
  const bool is_float = b.info.dtype == DType::kFloat32 && !b.info.qparams;
  if (!is_float && !is_quantized(b.info))
    not_lowered("bias " + describe(graph, bias) + " is neither float32 nor quantized");
  const QuantParams* q = is_float ? nullptr : &*b.info.qparams;
  if (q && q->per_channel() && static_cast<int64_t>(q->scales.size()) != n)
    not_lowered("bias " + describe(graph, bias) + " has per-channel qparams of another size");
  for (int64_t c = 0; c < n; ++c) {
    double value = 0.0;
    if (is_float) {
      value = std::nearbyint(static_cast<double>(b.data.data<float>()[c]) / scales[c]);
    } else {
      const size_t k = q->per_channel() ? static_cast<size_t>(c) : 0;
      const int64_t centered = raw_integer(b.data, c) - q->zero_points[k];
      // At the target scale already: the integers stay exact.
      value = q->scales[k] == scales[c]
                  ? static_cast<double>(centered)
                  : std::nearbyint(static_cast<double>(centered) * q->scales[k] / scales[c]);
    }
    if (!std::isfinite(value) || value < std::numeric_limits<int32_t>::min() ||
        value > std::numeric_limits<int32_t>::max())
      not_lowered("bias " + describe(graph, bias) + " element " + std::to_string(c) +
                  " does not fit int32 at scale " + std::to_string(scales[c]));
    out[static_cast<size_t>(c)] = static_cast<int32_t>(value);
  }
  return out;
}

Tensor bias_tensor(const std::vector<int32_t>& values, const std::vector<double>& scales) {
  TensorInfo info;
  info.dtype = DType::kInt32;
  info.shape = {static_cast<int64_t>(values.size())};
  QuantParams q;
  q.scales = scales;
  q.zero_points.assign(values.size(), 0);
  q.axis = 0;
  q.quant_min = std::numeric_limits<int32_t>::min();
  q.quant_max = std::numeric_limits<int32_t>::max();
  info.qparams = q;
  Tensor t(info);
  std::copy(values.begin(), values.end(), t.data<int32_t>());
  return t;
}

void requantize_attrs(const std::vector<double>& real_scales, std::vector<int64_t>* multipliers,
                      std::vector<int64_t>* shifts) {
  for (double real : real_scales) {
    int exponent = 0;
    if (valid_scale(real)) std::frexp(real, &exponent);
    if (!valid_scale(real) || exponent > kMaxShift)
      not_lowered("requantize scale " + std::to_string(real) + " is outside (0, 2^30)");
    const QuantizedMultiplier m = quantize_multiplier(real);
    multipliers->push_back(m.multiplier);
    shifts->push_back(m.shift);
  }
}

Rewrite::Rewrite(Graph& graph, NodeId node) : graph_(graph), old_(graph.node(node)) {}

Rewrite::~Rewrite() {
  if (committed_) return;
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    try {
      graph_.erase_node(*it);
    } catch (const GraphError&) {
      // Only nodes this rewrite made read each other: erasing in reverse cannot fail.
    }
  }
}

ValueId Rewrite::call(const std::string& op, std::vector<ValueId> inputs, Attrs attrs, bool main) {
  const ValueId out =
      graph_.call(op, std::move(inputs), std::move(attrs), old_.id, "", old_.source)[0];
  const NodeId id = graph_.producer(out);
  created_.push_back(id);
  Node& node = graph_.mutable_node(id);
  if (main) node.meta = old_.meta;
  node.meta["lowering"] = "cortex_m";
  return out;
}

ValueId Rewrite::constant(const std::string& suffix, Tensor data) {
  return graph_.add_constant(old_.name + "_" + suffix, std::move(data));
}

ValueId Rewrite::clone_dim_order(ValueId v, std::vector<int64_t> dim_order) {
  return call(kClone, {v}, {{"dim_order", std::move(dim_order)}});
}

ValueId Rewrite::view(ValueId v, std::vector<int64_t> shape) {
  return call(kView, {v}, {{"size", std::move(shape)}});
}

void Rewrite::set_qparams(ValueId v, const QuantParams& qparams) {
  graph_.mutable_value(v).info.qparams = qparams;
}

void Rewrite::commit(ValueId new_value) {
  take_over(graph_, old_.outputs[0], new_value);
  graph_.erase_node(old_.id);
  committed_ = true;
}

}  // namespace convert

namespace {

using Converter = void (*)(Graph&, NodeId);

Converter converter_for(const std::string& op) {
  if (op == "aten.convolution.default") return convert::convert_conv;
  if (op == "aten.linear.default" || op == "aten.addmm.default") return convert::convert_linear;
  if (op == "aten.add.Tensor" || op == "aten.mul.Tensor") return convert::convert_binary;
  if (op == "aten.max_pool2d.default" || op == "aten.avg_pool2d.default")
    return convert::convert_pool;
  return nullptr;
}

// An aten compute op reading or producing quantized values.
bool is_folded(const Graph& graph, const Node& node) {
  if (!takes_folded_form(OpRegistry::global().get(node.op))) return false;
  for (ValueId v : node.inputs)
    if (v != kNoValue && is_quantized(graph.value(v).info)) return true;
  for (ValueId v : node.outputs)
    if (is_quantized(graph.value(v).info)) return true;
  return false;
}

bool is_live(const Graph& graph, NodeId id) {
  return std::find(graph.order().begin(), graph.order().end(), id) != graph.order().end();
}

}  // namespace

bool convert_to_cortex_m(Graph& graph, const TargetConfig&) {
  bool changed = false;
  const std::vector<NodeId> order = graph.order();
  for (NodeId id : order) {
    if (!is_live(graph, id) || !is_folded(graph, graph.node(id))) continue;
    const std::string op = graph.node(id).op;
    const Converter convert = converter_for(op);
    std::string reason = "no cortex_m kernel for " + op;
    if (convert) {
      try {
        convert(graph, id);
        changed = true;
        continue;
      } catch (const convert::NotLowered& e) {
        reason = e.reason;
      } catch (const GraphError& e) {
        reason = std::string("the cortex_m op rejects it: ") + e.what();
      } catch (const UnsupportedError& e) {
        reason = e.what();
      }
    }
    graph.mutable_node(id).meta["lowering"] = "float: " + reason;
  }
  return changed;
}

}  // namespace cortexm
