// DecomposeAdaptiveAvgPool2d: when the input extent is a multiple of the output extent on both
// axes, adaptive_avg_pool2d is avg_pool2d with kernel = stride = in / out and no padding.
#include "passes/rewrite_util.h"

namespace cortexm {

bool decompose_adaptive_avg_pool2d(Graph& graph, const TargetConfig&) {
  return rewrite_nodes(graph, [&](NodeId id) {
    const Node& node = graph.node(id);
    if (node.op != "aten.adaptive_avg_pool2d.default") return false;
    const auto& in = graph.value(node.inputs[0]).info.shape;
    const auto& out = graph.value(node.outputs[0]).info.shape;
    const int64_t h = in[in.size() - 2], w = in.back();
    const int64_t oh = out[out.size() - 2], ow = out.back();
    if (h % oh || w % ow) return false;
    const std::vector<int64_t> kernel = {h / oh, w / ow};
    const ValueId input = node.inputs[0];
    const ValueId old_out = node.outputs[0];
    const std::string source = node.source;
    const ValueId pooled = graph.call("aten.avg_pool2d.default", {input},
                                      {{"kernel_size", kernel}, {"stride", kernel},
                                       {"padding", std::vector<int64_t>{0, 0}}},
                                      id, "", source)[0];
    const std::string float_value = float_value_of(node);
    take_over(graph, old_out, pooled);
    note_float_value(graph, pooled, float_value);
    graph.erase_node(id);
    return true;
  });
}

}  // namespace cortexm
