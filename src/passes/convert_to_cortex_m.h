// Shared by the ConvertToCortexM rewrites (convert_*.cc): one folded aten node becomes cortex_m
// ops. A rewrite that cannot lower its node throws NotLowered; the node then stays float.
#pragma once

#include <string>
#include <vector>

#include "ops/data_movement/data_movement_op_names.h"
#include "passes/rewrite_util.h"

namespace cortexm::convert {

struct NotLowered {
  std::string reason;
};

[[noreturn]] inline void not_lowered(const std::string& reason) { throw NotLowered{reason}; }

// Per-tensor int8 qparams of value v (what: "input", "output", ...), else NotLowered.
QuantParams int8_per_tensor(const Graph& graph, ValueId v, const std::string& what);
// Per-tensor symmetric int16 qparams of value v (convert_conv_s16.cc), else NotLowered.
QuantParams int16_per_tensor(const Graph& graph, ValueId v, const std::string& what);

// An int8 (quantized_channels / quantized_constant: `dtype`) value quantized per tensor or per
// channel along `axis` with `channels` channels: per channel, its scale and zero point; for a
// constant, its data.
struct QuantizedConstant {
  Tensor data;
  std::vector<double> scales;
  std::vector<int64_t> zero_points;
};
QuantizedConstant quantized_channels(const Graph& graph, ValueId v, int64_t axis, int64_t channels,
                                     const std::string& what, DType dtype);
QuantizedConstant quantized_constant(const Graph& graph, ValueId v, int64_t axis, int64_t channels,
                                     const std::string& what, DType dtype);
QuantizedConstant int8_channels(const Graph& graph, ValueId v, int64_t axis, int64_t channels,
                                const std::string& what);
QuantizedConstant int8_constant(const Graph& graph, ValueId v, int64_t axis, int64_t channels,
                                const std::string& what);

// The tensor weight w is repacked into: `shape` of `dtype`, at w's qparams with per-channel ones
// along `channel_axis`. The caller fills its data.
Tensor repacked_weight(const Graph& graph, ValueId w, DType dtype, std::vector<int64_t> shape,
                       int64_t channel_axis);

// The dtype of a conv / linear weight w: int8, or int16 (16x16) when the input x is symmetric
// int16; NotLowered for int16 weights on any other input (what: the weight's name in the op).
DType weight_dtype(const Graph& graph, ValueId x, ValueId w, const std::string& what);

// quantize_multiplier of each real scale, as int attributes; NotLowered if one is out of range.
void requantize_attrs(const std::vector<double>& real_scales, std::vector<int64_t>* multipliers,
                      std::vector<int64_t>* shifts);
// relu / hardtanh / clamp / hardsigmoid as out = clamp(scale * x + offset, lo, hi), bounds in
// float32 as their kernels use them; false for any other op (ops/activation/clamp_activation.cc).
struct ClampActivation {
  double scale = 1.0, offset = 0.0;
  float lo = 0.0f, hi = 0.0f;
};
bool clamp_activation(const Node& node, ClampActivation* activation);


// What a lowered conv / linear produces: the node's int8 (or, with dtype int16, symmetric int16)
// output; or, when that is float32 and read only by a folded clamp activation with such an output
// (a quantizer's conv + hardsigmoid or linear + relu pattern), the activation's: its scale and
// offset go into the requantization and the bias, its bounds into the activation range
// (quantizing commutes with the clamp).
struct OutputTarget {
  ValueId value = kNoValue;
  NodeId tail = kNoNode;
  std::string tail_op;
  QuantParams q;
  double scale = 1.0, offset = 0.0;
  int64_t activation_min = -128, activation_max = 127;
};
OutputTarget output_target(const Graph& graph, const Node& node, DType dtype = DType::kInt8);

// What a conv / linear kernel's accumulator is, and so its bias and requantization.
enum class Accumulator {
  kInt32,     // the int8 kernels: int32 bias, requantize (shifts up to 30)
  kInt64,     // the 16x8 kernels: int64 bias within +-2^40, requantize_s64 (shifts in [-31, 7])
  kInt64W16,  // the 16x16 kernels: the same, bias within +-kMaxBiasS16W16 (2^46: requantize.h)
};

// The per-channel requantization of a conv / linear: for each output channel c, the multiplier
// and shift of s_in * s_w[c] * tail_scale / s_out (one, of channel 0, with one_multiplier), and
// the bias constant at s_in * s_w[c] (zero point 0; zeros when bias is absent; a quantized bias
// at another scale requantized from its real value, a float one quantized) plus the output
// target's offset in accumulator units, offset / (target.scale * s_in * s_w[c]). tail_scale is
// target.scale, or 1 when s_out has it already. NotLowered for a scale or bias out of range.
struct ChannelRequantization {
  std::vector<int64_t> multipliers, shifts;
  Tensor bias;  // int32 [C] or int64 [C], quantized per channel
};
ChannelRequantization channel_requantization(const Graph& graph, ValueId bias, double input_scale,
                                             const std::vector<double>& weight_scales,
                                             double output_scale, double tail_scale,
                                             const OutputTarget& target, Accumulator accumulator,
                                             bool one_multiplier = false);

// Builds the replacement of one node before it. Unless commit() is called, the destructor erases
// the nodes it made, so a failed rewrite leaves the graph as it was (but for unused constants).
class Rewrite {
 public:
  Rewrite(Graph& graph, NodeId node);
  ~Rewrite();
  Rewrite(const Rewrite&) = delete;
  Rewrite& operator=(const Rewrite&) = delete;

  const Node& old() const { return old_; }
  Graph& graph() { return graph_; }

  // A new node before the old one, meta lowering = cortex_m; main marks the op that carries the
  // old node's meta (its qparams notes).
  ValueId call(const std::string& op, std::vector<ValueId> inputs, Attrs attrs, bool main = false);
  // The main op of a conv / linear that applies `r`: inputs then r's bias as a constant, attrs
  // then r's requantize_multipliers and requantize_shifts and the clamp activation_min / _max;
  // its output at qparams q.
  ValueId call_requantized(const std::string& op, std::vector<ValueId> inputs, Attrs attrs,
                           const ChannelRequantization& r, int64_t activation_min,
                           int64_t activation_max, const QuantParams& q);
  // The same, clamped to the target's activation range, at its qparams.
  ValueId call_requantized(const std::string& op, std::vector<ValueId> inputs, Attrs attrs,
                           const ChannelRequantization& r, const OutputTarget& target) {
    return call_requantized(op, std::move(inputs), std::move(attrs), r, target.activation_min,
                            target.activation_max, target.q);
  }
  ValueId constant(const std::string& suffix, Tensor data);
  ValueId clone_dim_order(ValueId v, std::vector<int64_t> dim_order);
  ValueId view(ValueId v, std::vector<int64_t> shape);
  void set_qparams(ValueId v, const QuantParams& qparams);

  // new_value replaces the target's value (take_over); the old node (and its tail, noted in the
  // main node's meta fused_activation) go.
  void commit(ValueId new_value, const OutputTarget* target = nullptr);

 private:
  Graph& graph_;
  const Node old_;
  std::vector<NodeId> created_;
  NodeId main_ = kNoNode;
  bool committed_ = false;
};

// (h, w) of a convolution's stride / padding / dilation / output_padding: one value or two for
// 2-D; a 1-D convolution's one value is w, with h = one_d_h (its (N, C, 1, W) view).
std::vector<int64_t> conv_spatial(const OpArgs& args, const char* attr, bool one_d, int64_t one_d_h);

// The operands of an aten.convolution node: input x, weight w, bias b (kNoValue when absent), the
// input's info and whether the conv is 1-D (lowered through the input's (N, C, 1, W) view).
// NotLowered for a rank other than 3 or 4 (what: the rank's name in the reason).
struct ConvOperands {
  ValueId x = kNoValue, w = kNoValue, b = kNoValue;
  TensorInfo in;
  bool one_d = false;
};
ConvOperands conv_operands(const Graph& graph, const Node& node, const std::string& what);
// The input as the conv kernels take it: its (N, C, 1, W) view when 1-D, channels-last.
ValueId conv_kernel_input(Rewrite& rw, const ConvOperands& conv);
// Commits the kernel's channels-last output y, back in the layout of the target's value `out`
// (and its 1-D shape).
void commit_conv_output(Rewrite& rw, ValueId y, const ConvOperands& conv, const TensorInfo& out,
                        const OutputTarget& target);

// An aten.convolution node with transposed = True.
bool is_transposed_conv(const Node& node);

// A size_t scratch size as the int attribute scratch_bytes; NotLowered beyond int32.
int64_t scratch_bytes(size_t bytes);

// The old node's input 0 when it is int8 / int16 with per-tensor qparams of a positive scale,
// contiguous (a clone of any other dim order). NotLowered otherwise.
ValueId contiguous_quantized_input(Rewrite& rw);
// contiguous_quantized_input, when its qparams are also the output's (the quantizer's passthrough
// pattern); those qparams in *qparams.
ValueId contiguous_passthrough_input(Rewrite& rw, QuantParams* qparams);

// The elementwise unary ops lowered as a lookup table (convert_activation.cc), and that lowering:
// the sqrt rewrite and ConvertUnfusedClamps fall back to it.
bool is_table_activation(const std::string& op);
void convert_activation(Graph& graph, NodeId node, const TargetConfig& target);

// What one rewrite lowers. Each convert_*.cc registers its own next to the rewrite:
//
//   CORTEXM_CONVERTER(linear) {
//     static const Converter converter{{"aten.linear.default", "aten.addmm.default"}, convert_linear};
//     return converter;
//   }
//
// CMake collects the CORTEXM_CONVERTER names of the convert_*.cc files into the generated
// passes/converters.inc, which ConvertToCortexM reads: adding a rewrite touches only its file.
// The rewrite lowers the node or throws NotLowered (or GraphError when the cortex_m op rejects what
// it was given). Ops whose kernel needs scratch record scratch_bytes, the kernel's *_scratch_size
// for the target's isa.
using ConvertFn = void (*)(Graph& graph, NodeId node, const TargetConfig& target);
enum class Form {
  kFolded,  // a folded node: an aten compute op reading or producing quantized values
  kAny,     // a node outside the folded form too (a quantize of a dequantize)
};
struct Converter {
  std::vector<std::string> ops;
  ConvertFn convert = nullptr;
  Form form = Form::kFolded;
  // Of the nodes of those ops (in that form), the ones it takes; null: every one. The converters
  // registered for one op accept disjoint sets of nodes.
  bool (*accepts)(const Graph& graph, const Node& node) = nullptr;
};
#define CORTEXM_CONVERTER(name) const ::cortexm::convert::Converter& name##_converter()

// Every registered converter, in the generated list's order.
const std::vector<const Converter*>& converters();
// The converter that takes node (folded: whether it is in the folded form), else null.
const Converter* converter_for(const Graph& graph, const Node& node, bool folded);

}  // namespace cortexm::convert
