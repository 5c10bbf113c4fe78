// ConvertToCortexM: folded aten ops on int8 / int16 values become cortex_m ops, and so do
// rescalings left outside the folded form; each convert_*.cc registers the ops its rewrite takes
// (CORTEXM_CONVERTER, collected into the generated passes/converters.inc). A folded op that cannot
// be lowered stays as it is with meta lowering = "float: <reason>".
#include "passes/convert_to_cortex_m.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <type_traits>
#include <unordered_map>

#include "cortexm/kernels/conv_params.h"
#include "cortexm/kernels/quantize_per_tensor.h"
#include "cortexm/kernels/requantize.h"
#include "graph/errors.h"
#include "graph/layout.h"
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
    case DType::kInt64: return t.data<int64_t>()[i];
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
  const QuantParams& q = *info.qparams;
  if (!valid_scale(q.scales[0]))
    not_lowered(what + " " + describe(graph, v) + " has a scale that is not finite and > 0");
  if (q.zero_points[0] < -128 || q.zero_points[0] > 127 || q.quant_min < -128 ||
      q.quant_max > 127 || q.quant_min > q.quant_max)
    not_lowered(what + " " + describe(graph, v) + " has a zero point or range outside int8");
  return q;
}

QuantizedConstant int8_constant(const Graph& graph, ValueId v, int64_t axis, int64_t channels,
                                const std::string& what) {
  return quantized_constant(graph, v, axis, channels, what, DType::kInt8);
}

QuantizedConstant int8_channels(const Graph& graph, ValueId v, int64_t axis, int64_t channels,
                                const std::string& what) {
  return quantized_channels(graph, v, axis, channels, what, DType::kInt8);
}

QuantizedConstant quantized_constant(const Graph& graph, ValueId v, int64_t axis, int64_t channels,
                                     const std::string& what, DType dtype) {
  if (graph.value(v).kind != ValueKind::kConstant)
    not_lowered(what + " " + describe(graph, v) + " is not a constant");
  QuantizedConstant out = quantized_channels(graph, v, axis, channels, what, dtype);
  out.data = graph.value(v).data;
  return out;
}

QuantizedConstant quantized_channels(const Graph& graph, ValueId v, int64_t axis, int64_t channels,
                                     const std::string& what, DType dtype) {
  const Value& value = graph.value(v);
  if (value.info.dtype != dtype || !value.info.qparams)
    not_lowered(what + " " + describe(graph, v) + " is not " + dtype_name(dtype) + " quantized");
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

namespace {

// Each bias element at scales[c], rounded, within +-limit (what: the range's name in errors).
std::vector<int64_t> rounded_bias(const Graph& graph, ValueId bias,
                                  const std::vector<double>& scales, double lo, double hi,
                                  const std::string& what) {
  const int64_t n = static_cast<int64_t>(scales.size());
  std::vector<int64_t> out(static_cast<size_t>(n), 0);
  if (bias == kNoValue) return out;
  const Value& b = graph.value(bias);
  if (b.kind != ValueKind::kConstant)
    not_lowered("bias " + describe(graph, bias) + " is not a constant");
  if (b.info.numel() != n)
    not_lowered("bias " + describe(graph, bias) + " does not have " + std::to_string(n) +
                " elements");
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
      // At the target scale already: the integer as it is (never through a float32 value).
      value = q->scales[k] == scales[c]
                  ? static_cast<double>(centered)
                  : std::nearbyint(static_cast<double>(centered) * q->scales[k] / scales[c]);
    }
    if (!std::isfinite(value) || value < lo || value > hi)
      not_lowered("bias " + describe(graph, bias) + " element " + std::to_string(c) +
                  " does not fit " + what + " at scale " + std::to_string(scales[c]));
    out[static_cast<size_t>(c)] = static_cast<int64_t>(value);
  }
  return out;
}

}  // namespace

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

OutputTarget output_target(const Graph& graph, const Node& node, DType dtype) {
  const auto per_tensor = dtype == DType::kInt16 ? int16_per_tensor : int8_per_tensor;
  OutputTarget t;
  t.value = node.outputs[0];
  const TensorInfo& info = graph.value(t.value).info;
  if (info.dtype != DType::kFloat32 || info.qparams) {
    t.q = per_tensor(graph, t.value, "output");
    t.activation_min = t.q.quant_min;
    t.activation_max = t.q.quant_max;
    return t;
  }
  const std::vector<NodeId> readers = graph.users(t.value);
  ClampActivation a;
  if (readers.size() != 1 || graph.is_graph_output(t.value) ||
      !clamp_activation(graph.node(readers[0]), &a) || graph.node(readers[0]).inputs[0] != t.value)
    not_lowered("output " + describe(graph, t.value) +
                " is float and not read by one relu / hardtanh / clamp / hardsigmoid alone");
  if (std::isnan(a.lo) || std::isnan(a.hi)) not_lowered("its activation has a NaN bound");
  const Node& tail = graph.node(readers[0]);
  t.tail = tail.id;
  t.tail_op = tail.op;
  t.value = tail.outputs[0];
  t.q = per_tensor(graph, t.value, "activation output");
  t.scale = a.scale;
  t.offset = a.offset;
  t.activation_min = std::max<int64_t>(t.q.quant_min, quantize_scalar(a.lo, t.q, dtype));
  t.activation_max = std::min<int64_t>(t.q.quant_max, quantize_scalar(a.hi, t.q, dtype));
  if (t.activation_min > t.activation_max) not_lowered("its activation range is empty");
  return t;
}

namespace {

std::vector<int32_t> int32_bias(const Graph& graph, ValueId bias,
                                const std::vector<double>& scales) {
  const std::vector<int64_t> values =
      rounded_bias(graph, bias, scales, std::numeric_limits<int32_t>::min(),
                   std::numeric_limits<int32_t>::max(), "int32");
  return std::vector<int32_t>(values.begin(), values.end());
}

// A per-channel bias constant of dtype T (int32 or int64) at scales[c], zero point 0.
template <typename T>
Tensor bias_tensor(const std::vector<T>& values, const std::vector<double>& scales) {
  TensorInfo info;
  info.dtype = std::is_same_v<T, int64_t> ? DType::kInt64 : DType::kInt32;
  info.shape = {static_cast<int64_t>(values.size())};
  QuantParams q;
  q.scales = scales;
  q.zero_points.assign(values.size(), 0);
  q.axis = 0;
  q.quant_min = std::numeric_limits<T>::min();
  q.quant_max = std::numeric_limits<T>::max();
  info.qparams = q;
  Tensor t(info);
  std::copy(values.begin(), values.end(), t.data<T>());
  return t;
}

Tensor int64_bias(const Graph& graph, ValueId bias, const std::vector<double>& scales,
                  bool int16_weights) {
  // CMSIS-NN's 16x8 kernels keep sums within +-2^47; a bias beyond +-2^40 is not a real model's.
  // The 16x16 scales are 2^8 finer, and their sums reach 2^46 (requantize.h).
  const double limit = int16_weights ? static_cast<double>(kMaxBiasS16W16) : std::ldexp(1.0, 40);
  return bias_tensor(rounded_bias(graph, bias, scales, -limit, limit, int16_weights ? "+-2^46" : "+-2^40"), scales);
}

void requantize_s64_attrs(const std::vector<double>& real_scales, std::vector<int64_t>* multipliers,
                          std::vector<int64_t>* shifts) {
  requantize_attrs(real_scales, multipliers, shifts);
  for (size_t c = 0; c < real_scales.size(); ++c) {
    if ((*shifts)[c] > kMaxShiftS64)
      not_lowered("requantize shift " + std::to_string((*shifts)[c]) + " exceeds 7");
    if ((*multipliers)[c] == 0) {
      char scale[32];
      std::snprintf(scale, sizeof(scale), "%.6g", real_scales[c]);
      not_lowered(std::string("requantize scale ") + scale +
                  " is below 2^-32 (the requantize's smallest shift is -31)");
    }
  }
}

void add_tail_offset(const OutputTarget& t, const std::vector<double>& bias_scales,
                     std::vector<int32_t>* bias) {
  if (t.offset == 0.0) return;
  for (size_t c = 0; c < bias->size(); ++c) {
    const double v = static_cast<double>((*bias)[c]) +
                     std::nearbyint(t.offset / (t.scale * bias_scales[c]));
    if (!(v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max()))
      not_lowered("bias with the activation's offset does not fit int32");
    (*bias)[c] = static_cast<int32_t>(v);
  }
}

}  // namespace

ChannelRequantization channel_requantization(const Graph& graph, ValueId bias, double input_scale,
                                             const std::vector<double>& weight_scales,
                                             double output_scale, double tail_scale,
                                             const OutputTarget& target, Accumulator accumulator,
                                             bool one_multiplier) {
  std::vector<double> bias_scales, real_scales;
  for (size_t c = 0; c < weight_scales.size(); ++c) {
    bias_scales.push_back(input_scale * weight_scales[c]);
    if (!one_multiplier || c == 0) real_scales.push_back(bias_scales.back() * tail_scale / output_scale);
  }
  ChannelRequantization r;
  if (accumulator == Accumulator::kInt32) {
    requantize_attrs(real_scales, &r.multipliers, &r.shifts);
    std::vector<int32_t> values = int32_bias(graph, bias, bias_scales);
    add_tail_offset(target, bias_scales, &values);
    r.bias = bias_tensor(values, bias_scales);
    return r;
  }
  requantize_s64_attrs(real_scales, &r.multipliers, &r.shifts);
  r.bias = int64_bias(graph, bias, bias_scales, accumulator == Accumulator::kInt64W16);
  if (target.offset != 0.0) {  // the tail's offset in accumulator units
    for (size_t c = 0; c < bias_scales.size(); ++c)
      r.bias.data<int64_t>()[c] += static_cast<int64_t>(
          std::nearbyint(target.offset / (target.scale * bias_scales[c])));
  }
  return r;
}

std::vector<int64_t> conv_spatial(const OpArgs& args, const char* attr, bool one_d, int64_t one_d_h) {
  const std::vector<int64_t>& v = args.ints(attr);
  int64_t h = 0, w = 0;
  if (!conv_spatial_pair(v.data(), v.size(), one_d, one_d_h, &h, &w))
    not_lowered(std::string("attribute '") + attr + "'" + (one_d ? " of a 1-D conv" : "") + " has " +
                std::to_string(v.size()) + " values");
  return {h, w};
}

ConvOperands conv_operands(const Graph& graph, const Node& node, const std::string& what) {
  ConvOperands c;
  c.x = node.inputs[0];
  c.w = node.inputs[1];
  c.b = node.inputs.size() > 2 ? node.inputs[2] : kNoValue;
  c.in = graph.value(c.x).info;
  c.one_d = c.in.rank() == 3;
  if (!c.one_d && c.in.rank() != 4)
    not_lowered(what + " " + std::to_string(c.in.rank()) + " (1-D or 2-D only)");
  return c;
}

ValueId conv_kernel_input(Rewrite& rw, const ConvOperands& c) {
  const ValueId v = c.one_d ? rw.view(c.x, {c.in.shape[0], c.in.shape[1], 1, c.in.shape[2]}) : c.x;
  return rw.clone_dim_order(v, channels_last_dim_order(4));
}

void commit_conv_output(Rewrite& rw, ValueId y, const ConvOperands& c, const TensorInfo& out,
                        const OutputTarget& target) {
  ValueId v = rw.clone_dim_order(y, c.one_d ? std::vector<int64_t>{0, 1, 2, 3} : out.effective_dim_order());
  if (c.one_d) v = rw.view(v, out.shape);
  rw.commit(v, &target);
}

bool is_transposed_conv(const Node& node) {
  return OpArgs(node.op, node.name, node.attrs).b("transposed");
}

ValueId contiguous_quantized_input(Rewrite& rw) {
  const ValueId x = rw.old().inputs[0];
  const TensorInfo in = rw.graph().value(x).info;  // a copy: the rewrite's new values may move the graph's
  if (in.dtype != DType::kInt8 && in.dtype != DType::kInt16)
    not_lowered(std::string("its input is ") + dtype_name(in.dtype));
  if (!in.qparams || in.qparams->per_channel() || !(in.qparams->scales[0] > 0))
    not_lowered("its input has no per-tensor qparams with a positive scale");
  const std::vector<int64_t> contiguous = contiguous_dim_order(static_cast<size_t>(in.rank()));
  return in.effective_dim_order() == contiguous ? x : rw.clone_dim_order(x, contiguous);
}

ValueId contiguous_passthrough_input(Rewrite& rw, QuantParams* qparams) {
  const Node& node = rw.old();
  const TensorInfo& in = rw.graph().value(node.inputs[0]).info;
  const std::optional<QuantParams> q_out = rw.graph().value(node.outputs[0]).info.qparams;
  const bool integer = in.dtype == DType::kInt8 || in.dtype == DType::kInt16;
  if (integer && (!in.qparams || in.qparams->per_channel() || !q_out || *in.qparams != *q_out))
    not_lowered("its output's qparams are not its input's");
  const ValueId source = contiguous_quantized_input(rw);  // NotLowered unless int8 / int16
  *qparams = *q_out;
  return source;
}

int64_t scratch_bytes(size_t bytes) {
  if (bytes > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
    not_lowered("its kernel needs " + std::to_string(bytes) + " bytes of scratch (over 2^31)");
  return static_cast<int64_t>(bytes);
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
  if (main) {
    node.meta = old_.meta;
    main_ = id;
  }
  node.meta["lowering"] = "cortex_m";
  return out;
}

Tensor repacked_weight(const Graph& graph, ValueId w, DType dtype, std::vector<int64_t> shape,
                       int64_t channel_axis) {
  TensorInfo info;
  info.dtype = dtype;
  info.shape = std::move(shape);
  info.qparams = graph.value(w).info.qparams;
  if (info.qparams->per_channel()) info.qparams->axis = channel_axis;
  return Tensor(info);
}

ValueId Rewrite::call_requantized(const std::string& op, std::vector<ValueId> inputs, Attrs attrs,
                                  const ChannelRequantization& r, int64_t activation_min,
                                  int64_t activation_max, const QuantParams& q) {
  inputs.push_back(constant("bias", r.bias));
  attrs.insert(attrs.end(), {{"requantize_multipliers", r.multipliers},
                             {"requantize_shifts", r.shifts},
                             {"activation_min", activation_min},
                             {"activation_max", activation_max}});
  const ValueId y = call(op, std::move(inputs), std::move(attrs), true);
  set_qparams(y, q);
  return y;
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

void Rewrite::commit(ValueId new_value, const OutputTarget* target) {
  const bool tail = target && target->tail != kNoNode;
  // The integers new_value holds are those of the tail's output, else the old node's.
  const std::string float_value = float_value_of(tail ? graph_.node(target->tail) : old_);
  take_over(graph_, tail ? target->value : old_.outputs[0], new_value);
  if (tail) {
    if (main_ != kNoNode) graph_.mutable_node(main_).meta["fused_activation"] = target->tail_op;
    graph_.erase_node(target->tail);
  }
  graph_.erase_node(old_.id);
  // On the main op: the views and clones after it keep the values and may be folded away.
  if (main_ != kNoNode) {
    graph_.mutable_node(main_).meta.erase(kFloatValueMeta);
    note_float_value(graph_, graph_.node(main_).outputs[0], float_value);
  } else {
    note_float_value(graph_, new_value, float_value);
  }
  committed_ = true;
}

// Every convert_*.cc's registration, from the generated list.
#define CORTEXM_CONVERTER_FILE(name) CORTEXM_CONVERTER(name);
#include "passes/converters.inc"
#undef CORTEXM_CONVERTER_FILE

const std::vector<const Converter*>& converters() {
  static const std::vector<const Converter*> all = {
#define CORTEXM_CONVERTER_FILE(name) &name##_converter(),
#include "passes/converters.inc"
#undef CORTEXM_CONVERTER_FILE
  };
  return all;
}

const Converter* converter_for(const Graph& graph, const Node& node, bool folded) {
  static const std::unordered_map<std::string, std::vector<const Converter*>> by_op = [] {
    std::unordered_map<std::string, std::vector<const Converter*>> map;
    for (const Converter* c : converters())
      for (const std::string& op : c->ops) map[op].push_back(c);
    return map;
  }();
  const auto it = by_op.find(node.op);
  if (it == by_op.end()) return nullptr;
  for (const Converter* c : it->second)
    if ((folded || c->form == Form::kAny) && (!c->accepts || c->accepts(graph, node))) return c;
  return nullptr;
}

}  // namespace convert

namespace {

bool is_live(const Graph& graph, NodeId id) {
  return std::find(graph.order().begin(), graph.order().end(), id) != graph.order().end();
}

}  // namespace

bool convert_to_cortex_m(Graph& graph, const TargetConfig& target) {
  return rewrite_nodes(graph, [&](NodeId id) {
    if (!is_live(graph, id)) return false;
    const bool folded = is_in_folded_form(graph, graph.node(id));
    const convert::Converter* converter = convert::converter_for(graph, graph.node(id), folded);
    if (!converter && !folded) return false;
    const std::string op = graph.node(id).op;
    std::string reason = "no cortex_m kernel for " + op;
    if (converter) {
      try {
        converter->convert(graph, id, target);
        return true;
      } catch (const convert::NotLowered& e) {
        reason = e.reason;
      } catch (const GraphError& e) {
        reason = std::string("the cortex_m op rejects it: ") + e.what();
      } catch (const UnsupportedError& e) {
        reason = e.what();
      }
    }
    graph.mutable_node(id).meta["lowering"] = "float: " + reason;
    return false;
  });
}

}  // namespace cortexm
