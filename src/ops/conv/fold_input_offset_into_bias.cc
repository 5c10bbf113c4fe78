// FoldInputOffsetIntoBias: an int8 cortex_m conv2d or linear whose weights and bias (or no bias)
// are constants takes the bias its kernels read with bias_includes_input_offset, computed once
// here by the kernel library (quantized_conv2d_fold_bias / quantized_linear_fold_bias) instead of
// input_offset * (sum of each weight row) on every inference. The folded bias is a new constant
// (the old one may be shared); DeadCodeElimination drops the old one when nothing else reads it.
#include <algorithm>

#include "cortexm/kernels/quantized_conv2d.h"
#include "cortexm/kernels/quantized_linear.h"
#include "passes/pass.h"

namespace cortexm {

namespace {

constexpr const char* kConv2d = "cortex_m.quantized_conv2d.default";
constexpr const char* kLinear = "cortex_m.quantized_linear.default";
constexpr const char* kFlag = "bias_includes_input_offset";

bool is_constant(const Graph& graph, ValueId v) {
  return v != kNoValue && graph.value(v).kind == ValueKind::kConstant;
}

// The folded bias of node `id` (conv2d or linear) from its constant weights and bias.
std::vector<int32_t> folded_bias(const Graph& graph, const Node& node, int64_t channels) {
  const OpArgs args(node.op, node.name, node.attrs);
  const Tensor& weights = graph.value(node.inputs[1]).data;
  const ValueId b = node.inputs.size() > 2 ? node.inputs[2] : kNoValue;
  const int32_t* bias = b == kNoValue ? nullptr : graph.value(b).data.data<int32_t>();
  std::vector<int32_t> folded(static_cast<size_t>(channels));
  const std::vector<int64_t>& ws = weights.shape();
  if (node.op == kConv2d) {
    Conv2dParams p;
    p.filter = Dims4{static_cast<int32_t>(ws[0]), static_cast<int32_t>(ws[1]),
                     static_cast<int32_t>(ws[2]), static_cast<int32_t>(ws[3])};
    p.quant.input_offset = static_cast<int32_t>(args.i("input_offset"));
    quantized_conv2d_fold_bias(p, weights.data<int8_t>(), bias, folded.data());
  } else {
    LinearParams p;
    p.output_features = static_cast<int32_t>(ws[0]);
    p.input_features = static_cast<int32_t>(ws[1]);
    p.input_offset = static_cast<int32_t>(args.i("input_offset"));
    p.filter_offset = static_cast<int32_t>(args.i("filter_offset"));
    quantized_linear_fold_bias(p, weights.data<int8_t>(), bias, folded.data());
  }
  return folded;
}

}  // namespace

bool fold_input_offset_into_bias(Graph& graph, const TargetConfig&) {
  return rewrite_nodes(graph, [&](NodeId id) {
    const Node& node = graph.node(id);
    if (node.op != kConv2d && node.op != kLinear) return false;
    if (OpArgs(node.op, node.name, node.attrs).b(kFlag)) return false;
    const ValueId w = node.inputs[1];
    const ValueId b = node.inputs.size() > 2 ? node.inputs[2] : kNoValue;
    if (!is_constant(graph, w) || (b != kNoValue && !is_constant(graph, b))) return false;
    const int64_t channels = graph.value(w).info.shape[0];
    const std::vector<int32_t> folded = folded_bias(graph, node, channels);
    const bool same = b == kNoValue
        ? std::all_of(folded.begin(), folded.end(), [](int32_t v) { return v == 0; })
        : std::equal(folded.begin(), folded.end(), graph.value(b).data.data<int32_t>());
    if (!same) {
      TensorInfo info;
      if (b != kNoValue) {
        info = graph.value(b).info;
      } else {
        info.dtype = DType::kInt32;
        info.shape = {channels};
      }
      Tensor data(info);
      std::copy(folded.begin(), folded.end(), data.data<int32_t>());
      const ValueId constant = graph.add_constant(node.name + "_folded_bias", std::move(data));
      Node& mutable_node = graph.mutable_node(id);
      if (mutable_node.inputs.size() < 3) mutable_node.inputs.resize(3, kNoValue);
      graph.replace_input(id, 2, constant);
    }
    graph.set_attr(id, kFlag, true);
    return true;
  });
}

}  // namespace cortexm
