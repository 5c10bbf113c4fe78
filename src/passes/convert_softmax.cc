// ConvertToCortexM, softmax: aten._softmax.default -> cortex_m.quantized_softmax (output qparams
// must be arm_softmax_s8's 1/256, -128) and aten._log_softmax.default ->
// cortex_m.quantized_log_softmax (output 16/256, 127, TFLite's). The input multiplier, shift,
// diff_min (and log_softmax's reverse scaling) come from the input scale ahead of time. The
// kernels work along the dim innermost in memory: another dim is moved there with
// _clone_dim_order before and moved back after.
#include <algorithm>

#include "cortexm/kernels/quantized_log_softmax.h"
#include "passes/convert_to_cortex_m.h"

namespace cortexm::convert {

void convert_softmax(Graph& graph, NodeId id, const TargetConfig&) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const bool log = node.op == "aten._log_softmax.default";
  const OpArgs args(node.op, node.name, node.attrs);
  if (args.b("half_to_float")) not_lowered("half_to_float = True");
  const ValueId x = node.inputs[0];
  const QuantParams q_in = int8_per_tensor(graph, x, "input");
  const QuantParams q_out = int8_per_tensor(graph, node.outputs[0], "output");
  const double scale = log ? 16.0 / 256.0 : 1.0 / 256.0;
  const int64_t zero_point = log ? 127 : -128;
  if (q_out.scales[0] != scale || q_out.zero_points[0] != zero_point || q_out.quant_min != -128 ||
      q_out.quant_max != 127)
    not_lowered(std::string("output qparams must be ") + (log ? "16/256, 127" : "1/256, -128") +
                " over [-128, 127] (the kernel's)");

  const TensorInfo in = graph.value(x).info;
  const TensorInfo out = graph.value(node.outputs[0]).info;
  const int64_t rank = in.rank();
  if (rank < 1) not_lowered("input is a scalar");
  int64_t dim = args.i("dim");
  dim = dim < 0 ? dim + rank : dim;
  std::vector<int64_t> order = in.effective_dim_order();
  ValueId rows = x;
  if (order.back() != dim) {  // move dim innermost, keeping the other dims' order
    order.erase(std::find(order.begin(), order.end(), dim));
    order.push_back(dim);
    rows = rw.clone_dim_order(x, order);
  }

  LogSoftmaxScaling s;
  SoftmaxScaling softmax;
  const Error e = log ? log_softmax_scaling(q_in.scales[0], &s)
                      : softmax_scaling(q_in.scales[0], &softmax);
  if (!log) {
    s.input_multiplier = softmax.input_multiplier;
    s.input_left_shift = softmax.input_left_shift;
    s.diff_min = softmax.diff_min;
  }
  if (!e.ok()) not_lowered(std::string("input scale: ") + e.argument + " " + e.requirement);
  Attrs attrs = {{"dim", dim},
                 {"input_multiplier", int64_t{s.input_multiplier}},
                 {"input_shift", int64_t{s.input_left_shift}},
                 {"diff_min", int64_t{s.diff_min}}};
  if (log) {
    attrs.push_back({"reverse_scaling_divisor", int64_t{s.reverse_scaling_divisor}});
    attrs.push_back({"reverse_scaling_right_shift", int64_t{s.reverse_scaling_right_shift}});
  }
  ValueId y = rw.call(log ? "cortex_m.quantized_log_softmax.default"
                          : "cortex_m.quantized_softmax.default",
                      {rows}, std::move(attrs), true);
  rw.set_qparams(y, q_out);
  if (order != out.effective_dim_order()) y = rw.clone_dim_order(y, out.effective_dim_order());
  rw.commit(y);
}

}  // namespace cortexm::convert
