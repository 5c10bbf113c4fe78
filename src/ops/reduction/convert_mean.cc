// ConvertToCortexM, aten.mean.dim: cortex_m.quantized_mean (TFLite Micro's MEAN: the multiplier
// of s_in / s_out with 1/count folded in, mean_multiplier in quantized_mean.h) over any dims that
// form one block in the input's memory order, any keepdim, any input and output qparams. Equal
// qparams are no global average pool: AVERAGE_POOL_2D rounds differently from MEAN. A symmetric int16 mean
// over dims that all have size 1 (silero's mean over one time step) moves its elements unchanged:
// a view when the qparams agree, else cortex_m.requantize_s16 and a view; any other symmetric int16
// mean -> cortex_m.quantized_mean_s16, the int8 mean's arithmetic (TFLM's MEAN for int16).
// aten.sum.dim_IntList lowers the same way with the multiplier of s_in / s_out itself (a sum is
// count times the mean).
#include <algorithm>
#include <limits>

#include "cortexm/kernels/quantized_mean.h"
#include "cortexm/kernels/requantize_s16.h"
#include "passes/convert_to_cortex_m.h"

namespace cortexm::convert {

namespace {

// The dims the mean reduces (all when 'dim' is empty), as given.
std::vector<int64_t> reduced_dims(const Node& node, int64_t rank) {
  std::vector<int64_t> dims = OpArgs(node.op, node.name, node.attrs).ints("dim");
  if (dims.empty())
    for (int64_t d = 0; d < rank; ++d) dims.push_back(d);
  return dims;
}

// Whether every dim the mean reduces has size 1.
bool reduces_size_one_dims(const Graph& graph, const Node& node) {
  const TensorInfo& in = graph.value(node.inputs[0]).info;
  for (int64_t d : reduced_dims(node, in.rank()))
    if (in.shape[static_cast<size_t>(d < 0 ? d + in.rank() : d)] != 1) return false;
  return true;
}

void convert_mean_s16(Graph& graph, NodeId id) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const OpArgs args(node.op, node.name, node.attrs);
  const ValueId x = node.inputs[0];
  const TensorInfo in = graph.value(x).info;
  const TensorInfo out = graph.value(node.outputs[0]).info;
  const QuantParams q_in = int16_per_tensor(graph, x, "input");
  const QuantParams q_out = int16_per_tensor(graph, node.outputs[0], "output");
  std::vector<int64_t> identity(static_cast<size_t>(in.rank()));
  for (size_t k = 0; k < identity.size(); ++k) identity[k] = static_cast<int64_t>(k);
  if (in.effective_dim_order() != identity) not_lowered("the int16 input is not contiguous");
  ValueId y = x;
  const bool same = q_in.scales[0] == q_out.scales[0] && q_in.quant_min >= q_out.quant_min &&
                    q_in.quant_max <= q_out.quant_max;
  if (!same) {
    std::vector<int64_t> m, s;
    requantize_attrs({q_in.scales[0] / (q_out.scales[0] * (1 << kRequantizeS16LeftShift))}, &m, &s);
    y = rw.call("cortex_m.requantize_s16.default", {x},
                {{"input_zero_point", int64_t{0}},
                 {"output_zero_point", int64_t{0}},
                 {"output_multiplier", m[0]},
                 {"output_shift", s[0]},
                 {"output_dtype", DType::kInt16},
                 {"activation_min", q_out.quant_min},
                 {"activation_max", q_out.quant_max}},
                true);
    rw.set_qparams(y, q_out);
  }
  y = rw.view(y, out.shape);
  rw.set_qparams(y, q_out);
  rw.commit(y);
}

void convert_mean(Graph& graph, NodeId id, const TargetConfig& /*target*/) {
  const bool int16 = graph.value(graph.node(id).inputs[0]).info.dtype == DType::kInt16;
  if (int16 && reduces_size_one_dims(graph, graph.node(id))) return convert_mean_s16(graph, id);
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const OpArgs args(node.op, node.name, node.attrs);
  const ValueId x = node.inputs[0];
  const TensorInfo in = graph.value(x).info;
  const auto per_tensor = int16 ? int16_per_tensor : int8_per_tensor;
  const QuantParams q_in = per_tensor(graph, x, "input");
  const QuantParams q_out = per_tensor(graph, node.outputs[0], "output");
  const std::vector<int64_t> dims = reduced_dims(node, in.rank());
  int64_t count = 1;
  for (int64_t d : dims)  // aten.mean.dim's inference checked them
    count *= in.shape[static_cast<size_t>(d < 0 ? d + in.rank() : d)];
  if (count < 1) not_lowered("an empty mean");
  std::vector<int64_t> m, s;
  requantize_attrs({q_in.scales[0] / q_out.scales[0]}, &m, &s);
  // A sum is the mean's kernel without the 1/count fold.
  const QuantizedMultiplier s_in_over_s_out{static_cast<int32_t>(m[0]), static_cast<int32_t>(s[0])};
  const QuantizedMultiplier rescale = node.op == "aten.sum.dim_IntList"
                                          ? s_in_over_s_out
                                          : mean_multiplier(s_in_over_s_out, count);
  // The kernel's extents are int32; the elements after the reduced block in the input's memory
  // order are one of them.
  std::vector<int64_t> normalized;
  for (int64_t d : dims) normalized.push_back(d < 0 ? d + in.rank() : d);
  std::sort(normalized.begin(), normalized.end());
  // A mean over H and W of NCHW reads channels-last, as the convs around it write: the clone
  // cancels against theirs, and the kernel sums rows of C values.
  const bool spatial = in.rank() == 4 && normalized == std::vector<int64_t>{2, 3};
  const ValueId source = spatial ? rw.clone_dim_order(x, channels_last_dim_order(4)) : x;
  const std::vector<int64_t> order = graph.value(source).info.effective_dim_order();
  int64_t inner = 1;
  for (size_t k = order.size(); k-- > 0;) {
    if (std::find(normalized.begin(), normalized.end(), order[k]) != normalized.end()) break;
    inner *= in.shape[static_cast<size_t>(order[k])];
  }
  if (inner > std::numeric_limits<int32_t>::max())
    not_lowered("more than 2^31 elements after the reduced dims (the kernel's int32 extents)");
  const ValueId y = rw.call(int16 ? "cortex_m.quantized_mean_s16.default" : "cortex_m.quantized_mean.default",
                            {source},
                            {{"dim", dims},
                             {"keepdim", args.b("keepdim")},
                             {"input_offset", -q_in.zero_points[0]},
                             {"output_offset", q_out.zero_points[0]},
                             {"output_multiplier", int64_t{rescale.multiplier}},
                             {"output_shift", int64_t{rescale.shift}},
                             {"activation_min", q_out.quant_min},
                             {"activation_max", q_out.quant_max}},
                            true);
  rw.set_qparams(y, q_out);
  // keepdim's [N, C, 1, 1] keeps the channels-last order: back to the graph's contiguous one.
  rw.commit(spatial && args.b("keepdim") ? rw.clone_dim_order(y, {0, 1, 2, 3}) : y);
}

}  // namespace

CORTEXM_CONVERTER(mean) {
  static const Converter converter{{"aten.mean.dim", "aten.sum.dim_IntList"}, convert_mean};
  return converter;
}

}  // namespace cortexm::convert
