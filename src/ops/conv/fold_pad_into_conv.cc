// FoldPadIntoConv: a constant_pad_nd of the H / W dims whose value is the conv's input zero point
// (the quantized 0.0 that the kernels' padded taps stand for) folds into the convolution's
// padding, which may then be asymmetric (TensorFlow's SAME: DS-CNN pads 4 rows above, 5 below).
// The chain ConvertToCortexM leaves is pad -> [view_copy to (N, C, 1, W) for a 1-D conv] ->
// _clone_dim_order to channels-last -> conv; each link must be read by the next one alone. The
// view and the clone then read the unpadded value, and the pad goes (DeadCodeElimination).
#include <cmath>

#include "graph/errors.h"
#include "ops/cortex_m_util.h"
#include "passes/pass.h"

namespace cortexm {

namespace {

constexpr const char* kPad = "aten.constant_pad_nd.default";
constexpr const char* kView = "aten.view_copy.default";
constexpr const char* kClone = "dim_order_ops._clone_dim_order.default";

// The 16x8 and 16x16 convs: zero point 0, no offset.
constexpr const char* kConvS16 = "cortex_m.quantized_conv2d_s16.default";
constexpr const char* kConvS16W16 = "cortex_m.quantized_conv2d_s16w16.default";

bool is_symmetric_int16_conv(const std::string& op) { return op == kConvS16 || op == kConvS16W16; }

bool is_conv(const std::string& op) {
  return op == "cortex_m.quantized_conv2d.default" ||
         op == "cortex_m.quantized_depthwise_conv2d.default" || is_symmetric_int16_conv(op);
}

OpArgs args_of(const Node& node) { return OpArgs(node.op, node.name, node.attrs); }

// The producer of v when it is a node of `op` read by `reader` alone, else kNoNode.
NodeId sole_producer(const Graph& graph, ValueId v, const char* op, NodeId reader) {
  const NodeId p = graph.producer(v);
  if (p == kNoNode || graph.node(p).op != op || graph.is_graph_output(v)) return kNoNode;
  for (NodeId u : graph.users(v))
    if (u != reader) return kNoNode;
  return p;
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
  const std::vector<int64_t>& amounts = args_of(pad_node).ints("pad");
  // 1-D: (N, C, W) padded on W, viewed as (N, C, 1, W); 2-D: (N, C, H, W) padded on W and H.
  const bool one_d = view != kNoNode;
  if (one_d ? padded.rank() != 3 || amounts.size() != 2
            : padded.rank() != 4 || (amounts.size() != 2 && amounts.size() != 4))
    return false;
  if (one_d) {
    const std::vector<int64_t>& size = args_of(graph.node(view)).ints("size");
    if (size != std::vector<int64_t>{padded.shape[0], padded.shape[1], 1, padded.shape[2]})
      return false;
  }
  for (int64_t a : amounts)
    if (a < 0) return false;  // a crop, not a pad
  const int64_t zero_point = is_symmetric_int16_conv(conv.op) ? 0 : -args_of(conv).i("input_offset");
  if (args_of(pad_node).f("value") != static_cast<double>(zero_point)) return false;

  const Padding2d own = ops::padding_attr(args_of(conv));
  const int64_t top = amounts.size() == 4 ? amounts[2] : 0, bottom = amounts.size() == 4 ? amounts[3] : 0;
  const std::vector<int64_t> padding = {own.top + top, own.left + amounts[0], own.bottom + bottom,
                                        own.right + amounts[1]};  // top, left, bottom, right
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
  return rewrite_nodes(graph, [&](NodeId id) { return is_conv(graph.node(id).op) && fold(graph, id); });
}

}  // namespace cortexm
