// FoldPadIntoConv: a constant_pad_nd of the H / W dims whose value is the conv's input zero point
// (the quantized 0.0 that the kernels' padded taps stand for) folds into the convolution's
// padding, which may then be asymmetric (TensorFlow's SAME: DS-CNN pads 4 rows above, 5 below).
// The chain ConvertToCortexM leaves is pad -> [view_copy to (N, C, 1, W) for a 1-D conv] ->
// _clone_dim_order to channels-last -> conv; each link must be read by the next one alone. The
// view and the clone then read the unpadded value, and the pad goes (DeadCodeElimination).
#include <cmath>

#include "graph/errors.h"
#include "passes/pass.h"

namespace cortexm {

namespace {

constexpr const char* kPad = "aten.constant_pad_nd.default";
constexpr const char* kView = "aten.view_copy.default";
constexpr const char* kClone = "dim_order_ops._clone_dim_order.default";

bool is_conv(const std::string& op) {
  return op == "cortex_m.quantized_conv2d.default" ||
         op == "cortex_m.quantized_depthwise_conv2d.default" ||
         op == "cortex_m.quantized_conv2d_s16.default";
}

const AttrValue* find_attr(const Node& node, const std::string& name) {
  for (const auto& [key, value] : node.attrs)
    if (key == name) return &value;
  return nullptr;
}

// The producer of v when it is a node of `op` read by `reader` alone, else kNoNode.
NodeId sole_producer(const Graph& graph, ValueId v, const char* op, NodeId reader) {
  const NodeId p = graph.producer(v);
  if (p == kNoNode || graph.node(p).op != op || graph.is_graph_output(v)) return kNoNode;
  for (NodeId u : graph.users(v))
    if (u != reader) return kNoNode;
  return p;
}

// (top, left, bottom, right) of the conv's `padding` attribute (2 or 4 values).
std::vector<int64_t> conv_padding(const Node& conv) {
  const auto& v = std::get<std::vector<int64_t>>(*find_attr(conv, "padding"));
  return v.size() == 2 ? std::vector<int64_t>{v[0], v[1], v[0], v[1]} : v;
}

bool fold(Graph& graph, NodeId conv_id) {
  const Node& conv = graph.node(conv_id);
  const NodeId clone = sole_producer(graph, conv.inputs[0], kClone, conv_id);
  if (clone == kNoNode) return false;
  NodeId view = sole_producer(graph, graph.node(clone).inputs[0], kView, clone);
  const NodeId pad_reader = view == kNoNode ? clone : view;
  const NodeId pad = sole_producer(graph, graph.node(pad_reader).inputs[0], kPad, pad_reader);
  if (pad == kNoNode) return false;

  const Node& pad_node = graph.node(pad);
  const TensorInfo& unpadded = graph.value(pad_node.inputs[0]).info;
  const TensorInfo& padded = graph.value(pad_node.outputs[0]).info;
  const std::vector<int64_t>& amounts = std::get<std::vector<int64_t>>(*find_attr(pad_node, "pad"));
  // 1-D: (N, C, W) padded on W, viewed as (N, C, 1, W); 2-D: (N, C, H, W) padded on W and H.
  const bool one_d = view != kNoNode;
  if (one_d ? padded.rank() != 3 || amounts.size() != 2
            : padded.rank() != 4 || (amounts.size() != 2 && amounts.size() != 4))
    return false;
  if (one_d) {
    const auto& size = std::get<std::vector<int64_t>>(*find_attr(graph.node(view), "size"));
    if (size != std::vector<int64_t>{padded.shape[0], padded.shape[1], 1, padded.shape[2]})
      return false;
  }
  for (int64_t a : amounts)
    if (a < 0) return false;  // a crop, not a pad
  const AttrValue* offset = find_attr(conv, "input_offset");
  const int64_t zero_point = offset ? -std::get<int64_t>(*offset) : 0;
  const double value = std::get<double>(*find_attr(pad_node, "value"));
  if (value != static_cast<double>(zero_point)) return false;

  std::vector<int64_t> padding = conv_padding(conv);  // top, left, bottom, right
  padding[1] += amounts[0];
  padding[3] += amounts[1];
  if (amounts.size() == 4) {
    padding[0] += amounts[2];
    padding[2] += amounts[3];
  }
  const TensorInfo conv_output = graph.value(conv.outputs[0]).info;

  if (one_d) {
    graph.set_attr(view, "size", std::vector<int64_t>{unpadded.shape[0], unpadded.shape[1], 1,
                                                      unpadded.shape[2]});
    graph.replace_input(view, 0, pad_node.inputs[0]);
    graph.reinfer(view);
  } else {
    graph.replace_input(clone, 0, pad_node.inputs[0]);
  }
  graph.reinfer(clone);
  graph.set_attr(conv_id, "padding", padding);
  graph.reinfer(conv_id);
  if (graph.value(graph.node(conv_id).outputs[0]).info != conv_output)
    throw GraphError("FoldPadIntoConv changed the output of '" + graph.node(conv_id).name + "'");
  graph.erase_node(pad);
  return true;
}

}  // namespace

bool fold_pad_into_conv(Graph& graph, const TargetConfig&) {
  bool changed = false;
  const std::vector<NodeId> order = graph.order();
  for (NodeId id : order)
    if (is_conv(graph.node(id).op) && fold(graph, id)) changed = true;
  return changed;
}

}  // namespace cortexm
